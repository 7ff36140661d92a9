/**
 * The tree-sitter runtime and grammars as bytes and as compiled WebAssembly modules. Each `.wasm`
 * is packed (gzip, src/ckg/wasm) and imported with `{ type: "bytes" }`, so a bundled or compiled
 * Deft carries them and nothing is read from disk at run time; the imports are dynamic so only the
 * grammars a codebase uses are loaded. Each module is compiled once per process and shared with
 * parser workers: V8 shares the compiled (and later optimised) code between threads, so a worker
 * neither compiles nor warms up a grammar on its own.
 */
import type { GrammarId } from "./languages.ts";

type Bytes = { default: Uint8Array };

// Packed with `deno task grammars` from the grammar packages (gzip: a tenth of the size).
const GRAMMARS: Readonly<Record<GrammarId, () => Promise<Bytes>>> = {
  python: () => import("./wasm/python.wasm.gz", { with: { type: "bytes" } }),
  java: () => import("./wasm/java.wasm.gz", { with: { type: "bytes" } }),
  c: () => import("./wasm/c.wasm.gz", { with: { type: "bytes" } }),
  cpp: () => import("./wasm/cpp.wasm.gz", { with: { type: "bytes" } }),
  javascript: () => import("./wasm/javascript.wasm.gz", { with: { type: "bytes" } }),
  typescript: () => import("./wasm/typescript.wasm.gz", { with: { type: "bytes" } }),
  tsx: () => import("./wasm/tsx.wasm.gz", { with: { type: "bytes" } }),
  go: () => import("./wasm/go.wasm.gz", { with: { type: "bytes" } }),
  rust: () => import("./wasm/rust.wasm.gz", { with: { type: "bytes" } }),
};

/**
 * Unpacks a gzip-packed `.wasm`. Bytes that already are WebAssembly pass through: the bundle
 * (scripts/bundle.ts) stores grammars unpacked and compresses them its own way.
 */
export async function unpack(packed: Uint8Array): Promise<Uint8Array> {
  if (packed[0] === 0 && packed[1] === 0x61 && packed[2] === 0x73 && packed[3] === 0x6d) {
    return packed;
  }
  const stream = new Blob([packed as Uint8Array<ArrayBuffer>]).stream()
    .pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).bytes();
}

const compiled = new Map<string, Promise<WebAssembly.Module>>();

function compileOnce(key: string, bytes: () => Promise<Uint8Array>): Promise<WebAssembly.Module> {
  let module = compiled.get(key);
  if (!module) {
    module = bytes().then((b) => WebAssembly.compile(b as Uint8Array<ArrayBuffer>));
    module.catch(() => compiled.delete(key));
    compiled.set(key, module);
  }
  return module;
}

/** The grammar `id`, compiled. */
export function grammarModule(id: GrammarId): Promise<WebAssembly.Module> {
  return compileOnce(id, async () => await unpack((await GRAMMARS[id]()).default));
}

/** The tree-sitter runtime itself (`web-tree-sitter.wasm`), compiled. */
export function runtimeModule(): Promise<WebAssembly.Module> {
  return compileOnce(
    "web-tree-sitter",
    async () =>
      await unpack(
        (await import("./wasm/web-tree-sitter.wasm.gz", { with: { type: "bytes" } })).default,
      ),
  );
}

/**
 * Emscripten module options for `Parser.init` that instantiate the runtime from `module` instead
 * of locating and compiling `web-tree-sitter.wasm` (parser workers build the same options).
 */
export function runtimeOptions(module: WebAssembly.Module): Record<string, unknown> {
  return {
    instantiateWasm(
      imports: WebAssembly.Imports,
      done: (instance: WebAssembly.Instance, compiled: WebAssembly.Module) => void,
    ) {
      WebAssembly.instantiate(module, imports).then((instance) => done(instance, module));
      return {};
    },
    locateFile: (file: string) => file,
  };
}

/**
 * The web-tree-sitter library as source text: a worker started from a Blob cannot resolve npm
 * packages, and in a bundle there is no package to resolve.
 */
export async function librarySource(): Promise<string> {
  const text: string = (await import("web-tree-sitter", { with: { type: "text" } })).default;
  // A relative source map reference cannot resolve against a blob: URL.
  return text.replace(/^\/\/# sourceMappingURL=.*$/m, "");
}

let libraryBlob: Promise<string> | undefined;

/**
 * A Blob URL of the library, to import in this thread or in a parser worker. Deno gives every
 * module a global `process`, and seeing it the library's start-up takes its Node.js path: it
 * loads node:module, node:fs, node:path and node:url (about 40 ms of a one-shot search) only to
 * locate a `.wasm` that `runtimeOptions` hands over already compiled. A module-level `process`
 * shadows the global for the library alone, so it takes the plain path; nothing else changes.
 */
export function libraryUrl(): Promise<string> {
  libraryBlob ??= (async () => {
    const source = `const process = undefined;\n${await librarySource()}`;
    return URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  })();
  libraryBlob.catch(() => libraryBlob = undefined);
  return libraryBlob;
}
