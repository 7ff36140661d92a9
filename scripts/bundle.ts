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
 * tighter than their gzip. Each code chunk becomes the body of an async function that the
 * launcher runs, not a module: see `asFunctionBody` for why.
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
  if (LAZY_ESM_INIT.test(code)) {
    throw new Error(
      `${name}: esbuild's lazy module init, whose exports change after the chunk ran`,
    );
  }
  code = asFunctionBody(name, code);
  if (code.length <= INLINE_BYTES) {
    return { name, kind: 3, data: new Uint8Array(0), source: code, deps: [...deps] };
  }
  return { name, kind: 0, data: compress(new TextEncoder().encode(code)), deps: [...deps] };
}

/**
 * One import statement of a chunk, as esbuild writes them (minified; mostly first, but an
 * external one may come after code): `import"./a.js"`, `import{a as b,c}from"./a.js"`, `import*as x from"node:fs"`,
 * `import x,{a}from"node:fs"`.
 */
const IMPORT_STATEMENT =
  /(?<=^|[;}])\s*import\s*(?:([\w$]+)\s*(?:,\s*)?)?(?:\*\s*as\s+([\w$]+)\s*|\{([^}"]*)\}\s*)?(?:from\s*)?"([^"]+)"\s*;?/g;
/**
 * esbuild's `__esm` helper (`fn && (res = fn(fn = 0)), res`, minified), for a module that another
 * one `require`s: its exports are assigned when it is first required, after the chunk ran, which
 * the imports read once (see `asFunctionBody`) would miss.
 */
const LAZY_ESM_INIT = /\(([\w$]+)=0\)\),[\w$]+\}/;
/** The chunk's exports, as esbuild writes them at its end (before a license comment, if any). */
const EXPORT_LIST = /export\s*\{([^}"]*)\}\s*;?\s*(\/\*(?:[^*]|\*(?!\/))*\*\/\s*)?$/;
const EXPORT_DEFAULT = /export\s+default\s+([^;]*);?\s*(\/\*(?:[^*]|\*(?!\/))*\*\/\s*)?$/;

/**
 * A code chunk (an ES module) rewritten as the body of an async function, which the launcher
 * runs with `new AsyncFunction` instead of importing it. Deno analyses and compiles a module from
 * a Blob URL afresh on every start and stores both in its caches under that URL, never to be
 * found again (a new URL each start): about 0.5 ms a module, 50 to 150 modules a command, and a
 * thousand database pages written each start. A function body costs only its compile.
 *
 * Each import becomes an awaited `__deftRequire` (the chunk, run once, in import order) or
 * `import()` (Deno's own `node:` modules), hoisted to the start as ES imports are; the exports
 * become getters on the returned object. An importing chunk reads the imported values once, when
 * it starts: every chunk it imports has run to its end by then (the chunks form no cycle), so
 * this differs from an ES import only for an export assigned later by a function, which esbuild
 * writes for a `require`d module (`LAZY_ESM_INIT`, refused) and Deft's code never does (no
 * `export let`). esbuild writes the exports last, imports as statements of their own; anything
 * else fails the build.
 */
function asFunctionBody(name: string, code: string): string {
  const lines: string[] = ['"use strict";'];
  let n = 0;
  // ES imports are hoisted: run before the chunk's first statement, wherever they are written.
  let body = code.replace(IMPORT_STATEMENT, (_, def, star, named, spec: string) => {
    const local = spec.startsWith("./");
    const from = local
      ? `await __deftRequire(${JSON.stringify(spec.slice(2))})`
      : `await import(${JSON.stringify(spec)})`;
    const id = `__deftDep${n++}`;
    lines.push(`const ${id}=${from};`);
    if (def) lines.push(`const ${def}=${id}.default;`);
    if (star) lines.push(`const ${star}=${id};`);
    if (named !== undefined && named.trim() !== "") {
      const parts = (named as string).split(",").map((part) => part.trim()).filter((p) => p);
      const fields = parts.map((part) => {
        const alias = /^([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part);
        if (!alias) throw new Error(`${name}: an import it names as ${part} is not handled`);
        return alias[2] ? `${alias[1]}:${alias[2]}` : alias[1];
      });
      lines.push(`const{${fields.join(",")}}=${id};`);
    }
    return "";
  });
  const exports: string[] = [];
  const list = EXPORT_LIST.exec(body);
  const fallback = list ? undefined : EXPORT_DEFAULT.exec(body);
  if (list) {
    body = body.slice(0, list.index) + (list[2] ?? "");
    for (const part of list[1].split(",").map((p) => p.trim()).filter((p) => p)) {
      const alias = /^([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part);
      if (!alias) throw new Error(`${name}: an export it names as ${part} is not handled`);
      exports.push(`get ${alias[2] ?? alias[1]}(){return ${alias[1]}}`);
    }
  } else if (fallback) {
    body = `${body.slice(0, fallback.index)}const __deftDefault=(${fallback[1]});` +
      (fallback[2] ?? "");
    exports.push("get default(){return __deftDefault}");
  }
  if (/(?:^|[;}])\s*(?:import\s*[\w${*"]|export\s*[\w{*])/.test(body)) {
    throw new Error(`${name}: an import or export statement where the bundler does not expect one`);
  }
  lines.push(body, `\nreturn{__proto__:null,${exports.join(",")}};`);
  return lines.join("");
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
