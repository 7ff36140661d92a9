/**
 * `deno task bundle [OUT]`: writes one self-contained JS file (default dist/deft.js) that runs
 * Deft with nothing beside it.
 *
 * A plain `deno bundle` puts all 4 MB of Deft (provider SDKs, MCP, tree-sitter and its grammars)
 * in one module, and Deno pays for every byte of the main module at start-up: over 3x the start
 * of a hello-world. So: `deno bundle --code-splitting` cuts Deft at its dynamic imports into
 * chunks; each chunk is compressed (brotli) into a comment at the end of the file; a small
 * launcher (`bundle_loader.ts`) inflates only the chunks a command imports. Raw imports (grammar
 * bytes, library text) are stored as their values; grammars unpacked, since brotli packs them
 * tighter than their gzip.
 *
 * In the chunks, `import.meta.url` becomes the bundle file's URL and `import.meta.main` whether
 * the bundle is the main module, so Deft still finds its worker entry and knows it was started.
 */
import { brotliCompressSync, constants, gunzipSync } from "node:zlib";
import { type BundleEntry, launch } from "./bundle_loader.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const BUNDLE_FLAGS = [
  "--platform",
  "deno",
  "--minify",
  "--unstable-raw-imports",
  "--unstable-worker-options",
  "--code-splitting",
];

/** `from"./x.js"`, `import"./x.js"` (static) and `import("./x.js")` (dynamic) in esbuild output. */
const STATIC_IMPORT = /(?:from|import)\s*"\.\/([\w.-]+\.js)"/g;
const DYNAMIC_IMPORT = /\bimport\("\.\/([\w.-]+\.js)"\)/g;
/** A raw `bytes` import: the shared base64 decoder applied to one literal, exported as default. */
const BYTES_CHUNK =
  /^import\{\w+ as (\w+)\}from"\.\/[\w.-]+\.js";var (\w+)=\1\("([A-Za-z0-9+/=]*)"\);export\{\2 as default\};?\s*$/;
/** A raw `text` import: one template literal exported as default. */
const TEXT_CHUNK =
  /^(?:import"\.\/[\w.-]+\.js";)?var (\w+)=`[\s\S]*`;export\{\1 as default\};?\s*$/;

interface Chunk {
  name: string;
  /** 0 code, 1 bytes, 2 text (compressed in `data`); 3 code kept inline as `source`. */
  kind: 0 | 1 | 2 | 3;
  data: Uint8Array;
  source?: string;
  deps: string[];
}

/** Code chunks up to this size stay inline: they are what every command loads first. */
const INLINE_BYTES = 16 * 1024;

/** deno bundle's header for npm code that calls `require`: made lazy, node:module costs 30 ms. */
const CREATE_REQUIRE =
  /import\{createRequire as __deno_internal_createRequire\} from "node:module";var (\w+)=__deno_internal_createRequire\(import\.meta\.url\);/g;

/** Bundles `main.ts` into `out`; returns its size in bytes. */
export async function bundle(out: string): Promise<number> {
  const split = await Deno.makeTempDir({ prefix: "deft-bundle-" });
  try {
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", ...BUNDLE_FLAGS, "--outdir", split, "main.ts"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!built.success) {
      throw new Error(`deno bundle failed:\n${new TextDecoder().decode(built.stderr)}`);
    }
    const names = [...Deno.readDirSync(split)].map((e) => e.name).filter((n) => n.endsWith(".js"));
    if (!names.includes("main.js")) throw new Error("deno bundle wrote no main.js");
    const chunks = await Promise.all(names.map((name) => readChunk(split, name, new Set(names))));
    checkAcyclic(chunks);
    const text = assemble(chunks);
    const tmp = `${out}.tmp-${Deno.pid}`;
    await Deno.mkdir(out.slice(0, out.lastIndexOf("/")) || ".", { recursive: true });
    await Deno.writeTextFile(tmp, text);
    await Deno.rename(tmp, out);
    return new TextEncoder().encode(text).length;
  } finally {
    await Deno.remove(split, { recursive: true });
  }
}

async function readChunk(dir: string, name: string, all: ReadonlySet<string>): Promise<Chunk> {
  const source = await Deno.readTextFile(`${dir}/${name}`);
  const bytes = BYTES_CHUNK.exec(source);
  if (bytes) {
    let data: Uint8Array = Uint8Array.from(atob(bytes[3]), (c) => c.charCodeAt(0));
    if (data[0] === 0x1f && data[1] === 0x8b) data = new Uint8Array(gunzipSync(data));
    return { name, kind: 1, data: compress(data), deps: [] };
  }
  if (TEXT_CHUNK.test(source)) {
    // The literal's exact value, escapes and all, is what the module exports.
    const value = (await import(`file://${dir}/${name}`)).default;
    if (typeof value !== "string") throw new Error(`${name}: expected a text module`);
    return { name, kind: 2, data: compress(new TextEncoder().encode(value)), deps: [] };
  }
  const missing = (ref: string) => {
    if (!all.has(ref)) throw new Error(`${name} imports ${ref}, which deno bundle did not write`);
  };
  let code = source.replace(DYNAMIC_IMPORT, (_, ref: string) => {
    missing(ref);
    return `globalThis.__deftImport(${JSON.stringify(ref)})`;
  });
  const deps = new Set<string>();
  for (const [, ref] of code.matchAll(STATIC_IMPORT)) {
    missing(ref);
    deps.add(ref);
  }
  code = code.replace(
    CREATE_REQUIRE,
    (_, id: string) =>
      `var ${id}=(m)=>(${id}.r??=process.getBuiltinModule("node:module")` +
      `.createRequire(globalThis.__deftLauncher))(m);`,
  );
  code = code.replaceAll("import.meta.url", "globalThis.__deftLauncher")
    .replaceAll("import.meta.main", "globalThis.__deftMain");
  if (/import\.meta\b/.test(code)) throw new Error(`${name} uses import.meta in a way not handled`);
  if (code.length <= INLINE_BYTES) {
    return { name, kind: 3, data: new Uint8Array(0), source: code, deps: [...deps] };
  }
  return { name, kind: 0, data: compress(new TextEncoder().encode(code)), deps: [...deps] };
}

function compress(data: Uint8Array): Uint8Array {
  return new Uint8Array(brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  }));
}

/** The launcher waits for a chunk's imports before the chunk: a cycle would never start. */
function checkAcyclic(chunks: readonly Chunk[]): void {
  const deps = new Map(chunks.map((c) => [c.name, c.deps]));
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]) => {
    if (state.get(name) === "done") return;
    if (state.get(name) === "visiting") {
      throw new Error(`chunks import each other in a cycle: ${[...path, name].join(" -> ")}`);
    }
    state.set(name, "visiting");
    for (const dep of deps.get(name) ?? []) visit(dep, [...path, name]);
    state.set(name, "done");
  };
  for (const chunk of chunks) visit(chunk.name, []);
}

function assemble(chunks: readonly Chunk[]): string {
  const index: Record<string, BundleEntry> = {};
  const parts: string[] = [];
  let offset = 0;
  for (const chunk of [...chunks].sort((a, b) => a.name.localeCompare(b.name))) {
    if (chunk.kind === 3) {
      index[chunk.name] = [3, chunk.source!, 0, chunk.deps];
      continue;
    }
    const base64 = (chunk.data as unknown as { toBase64(): string }).toBase64();
    index[chunk.name] = [chunk.kind, offset, base64.length, chunk.deps];
    parts.push(base64);
    offset += base64.length;
  }
  const payload = parts.join("");
  return [
    "// Deft, bundled by scripts/bundle.ts: a launcher, then every module compressed in a comment.",
    `const index = ${JSON.stringify(index)};`,
    `${launch.toString()}`,
    `await launch(index, ${payload.length}, import.meta.url, import.meta.main);`,
    "/*",
    payload,
    "*/",
    "",
  ].join("\n");
}

if (import.meta.main) {
  const out = Deno.args[0] ?? `${ROOT}dist/deft.js`;
  const size = await bundle(out);
  console.log(`${out}: ${(size / 1024 / 1024).toFixed(2)} MiB`);
}
