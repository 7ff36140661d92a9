/**
 * The start of a bundled Deft (see `bundle.ts`). It is written into dist/deft.js as source text,
 * so it must stay self-contained: no imports, no values from outside its body.
 *
 * Small modules (the ones every command needs) are inline source. The rest sit compressed in a
 * comment at the end of the file: a comment costs Deno far less at start-up than the same bytes
 * as code or as a string, and nothing is read or decompressed until it is imported. Each chunk
 * a command needs runs once as the body of an async function, given the loader for its imports
 * (bundle.ts `asFunctionBody`). Raw imports (grammar bytes, library text) come back as values.
 */

/**
 * One module: compressed in the payload (kind 0 code, 1 bytes, 2 text; offset and length of its
 * base64 there) or, for small code, inline as source (kind 3); then the chunks it imports.
 */
export type BundleEntry =
  | [kind: 0 | 1 | 2, offset: number, length: number, deps: string[]]
  | [kind: 3, source: string, length: 0, deps: string[]];

/** Starts the bundle whose modules `index` describes; `payloadLength` ends the file. */
export function launch(
  index: Record<string, BundleEntry>,
  payloadLength: number,
  self: string,
  isMain: boolean,
): Promise<unknown> {
  const scope = globalThis as unknown as Record<string, unknown>;
  scope.__deftLauncher = self;
  scope.__deftMain = isMain;
  let file: Deno.FsFile | undefined;
  let payloadStart = 0;
  const decoder = new TextDecoder();

  /** Reads `length` bytes at `offset` of the payload; the file is opened (and checked) once. */
  const readPayload = (offset: number, length: number): Uint8Array => {
    const path = decodeURIComponent(new URL(self).pathname);
    if (!file) {
      let opened: Deno.FsFile;
      try {
        opened = Deno.openSync(new URL(self)); // a URL: right on Windows too
      } catch (e) {
        const why = e instanceof Deno.errors.NotCapable
          ? "Deno's permissions do not allow it"
          : e instanceof Error
          ? e.message
          : String(e);
        throw new Error(
          `the bundle must be able to read itself (${path}): ${why}; ` +
            `run it with --allow-read (or --allow-read=${path},...)`,
        );
      }
      payloadStart = opened.statSync().size - payloadLength - 4;
      file = opened;
      if (payloadStart < 3 || decoder.decode(readPayload(-3, 3)) !== "/*\n") {
        file = undefined;
        opened.close();
        throw new Error(
          `${path} is damaged (its module payload is not where it should be: was it edited or ` +
            "its line ends converted?); rebuild it with `deno task bundle`",
        );
      }
    }
    const bytes = new Uint8Array(length);
    file.seekSync(payloadStart + offset, Deno.SeekMode.Start);
    for (let at = 0; at < length;) {
      const n = file.readSync(bytes.subarray(at));
      if (n === null) throw new Error(`${path} ends early: it is damaged`);
      at += n;
    }
    return bytes;
  };

  const inflate = async (name: string): Promise<Uint8Array> => {
    const entry = index[name];
    if (!entry || entry[0] === 3) throw new Error(`the bundle has no packed module ${name}`);
    const base64 = decoder.decode(readPayload(entry[1], entry[2]));
    const packed = (Uint8Array as unknown as { fromBase64(s: string): Uint8Array }).fromBase64(
      base64,
    );
    const stream = new Blob([packed as BlobPart]).stream().pipeThrough(
      new DecompressionStream("brotli" as CompressionFormat),
    );
    return new Uint8Array(await new Response(stream).arrayBuffer());
  };

  /** Chunks run or running, each once: its exports when done. */
  const modules = new Map<string, Promise<unknown>>();
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
    ...args: string[]
  ) => (require: (name: string) => Promise<unknown>) => Promise<unknown>;

  /**
   * Runs chunk `name`: its source (see `asFunctionBody` in bundle.ts) is the body of an async
   * function that takes `load` for its imports and returns its exports. Not a module from a Blob
   * URL: Deno would analyse and compile each afresh on every run, and write both to its caches
   * under a URL never used again.
   */
  const load = (name: string): Promise<unknown> => {
    let done = modules.get(name);
    if (!done) {
      done = (async () => {
        const entry = index[name];
        if (!entry) throw new Error(`the bundle has no module ${name}`);
        if (entry[0] === 1) return { default: await inflate(name) };
        if (entry[0] === 2) return { default: decoder.decode(await inflate(name)) };
        const source = entry[0] === 3 ? entry[1] : decoder.decode(await inflate(name));
        const run = new AsyncFunction("__deftRequire", `${source}\n//# sourceURL=deft/${name}`);
        return await run(load);
      })();
      modules.set(name, done);
    }
    return done;
  };
  scope.__deftImport = load;
  return load("main.js");
}
