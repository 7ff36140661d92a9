/**
 * The tool host has one face: every module outside src/tools/host/ imports it through mod.ts
 * (main.ts alone, the worker's own entry, reaches the three entry files), no tool below the host
 * imports it at all, and "am I in the tool worker?" is answered in one place.
 */
import * as assert from "node:assert/strict";
import { loadedModules } from "../../helpers/imports.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const HOST = "src/tools/host/";
/** The files main.ts may name directly: a worker must load none of the main thread's side. */
const ENTRIES = new Set(["entry_points.ts", "worker.ts", "relay.ts"].map((f) => HOST + f));

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(ROOT + dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await sources(path));
    else if (/\.(ts|tsx)$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** `text` without comments (strings kept, so an import's specifier survives). */
function withoutComments(text: string): string {
  return text.replace(
    /("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (m, literal) => literal ?? m.replace(/[^\n]/g, " "),
  );
}

/** Every import of `path` (static, type-only, re-export or `import()` of a literal), resolved. */
async function importsOf(path: string): Promise<{ to: string; line: number }[]> {
  const code = withoutComments(await Deno.readTextFile(ROOT + path));
  const found: { to: string; line: number }[] = [];
  const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']+)\1/g;
  for (const m of code.matchAll(specifier)) {
    const to = new URL(m[2], `file://${ROOT}${path}`).pathname.slice(ROOT.length);
    found.push({ to, line: code.slice(0, m.index).split("\n").length });
  }
  return found;
}

const modules = ["main.ts", ...await sources("src"), ...await sources("bench")];

Deno.test("tools/host: the rest of Deft imports the tool host only through mod.ts", async () => {
  const wrong: string[] = [];
  for (const from of modules.filter((m) => !m.startsWith(HOST))) {
    for (const { to, line } of await importsOf(from)) {
      if (!to.startsWith(HOST) || to === `${HOST}mod.ts`) continue;
      if (from === "main.ts" && ENTRIES.has(to)) continue;
      wrong.push(`${from}:${line} imports ${to}: import src/tools/host/mod.ts instead`);
    }
  }
  assert.deepEqual(wrong, [], wrong.join("\n"));
});

Deno.test("tools/host: no tool below the host imports it (no arrow back up inside src/tools)", async () => {
  const wrong: string[] = [];
  for (const from of modules.filter((m) => m.startsWith("src/tools/") && !m.startsWith(HOST))) {
    for (const { to, line } of await importsOf(from)) {
      if (to.startsWith(HOST)) wrong.push(`${from}:${line} imports ${to}`);
    }
  }
  assert.deepEqual(wrong, [], `the tool host sits above the tools:\n${wrong.join("\n")}`);
});

Deno.test("tools/host: whether code runs in the tool worker is decided in one module", async () => {
  const deciding: string[] = [];
  for (const path of modules.filter((m) => !m.startsWith("bench/"))) {
    const code = withoutComments(await Deno.readTextFile(ROOT + path));
    if (/\bWorkerGlobalScope\b/.test(code)) deciding.push(path);
  }
  assert.deepEqual(deciding, ["src/tools/worker_scope.ts"]);
});

Deno.test("tools/host: mod.ts is there and exports what the commands use", async () => {
  const face = await import("../../../src/tools/host/mod.ts");
  for (const name of ["createHostedTools", "hostDirs", "checkSandbox", "parseDeadlines"]) {
    assert.equal(typeof (face as Record<string, unknown>)[name], "function", name);
  }
});

/**
 * The sandboxed host's start (`deft __tool-host`): main.ts's first dynamic imports, relay.ts,
 * and the handler it loads (worker.ts). Deno loads a module's static imports before running it,
 * so all they reach is paid for by every one-off sandboxed call before its tool runs (read from
 * the sources: tests/helpers/imports.ts).
 */
const HOST_START = [
  "src/tools/worker_scope.ts",
  "src/tools/host/entry_points.ts",
  "src/tools/host/relay.ts",
  "src/tools/host/worker.ts",
];
/** What of src/tools/ the start may load besides the host itself: no tool, no definition. */
const HOST_START_TOOLS = new Set([
  "src/tools/base.ts",
  "src/tools/schema.ts",
  "src/tools/in_process.ts",
  "src/tools/loaders.ts",
  "src/tools/worker_scope.ts",
]);

Deno.test("tools/host: the sandboxed host's start loads no tool's module, definition or the catalog (each call loads its own tool)", () => {
  const { files } = loadedModules(HOST_START.map((path) => new URL(path, `file://${ROOT}`)));
  const seen = files.map((url) => new URL(url).pathname.slice(ROOT.length));
  const tools = seen.filter((p) =>
    p.startsWith("src/tools/") && !p.startsWith(HOST) && !HOST_START_TOOLS.has(p)
  );
  assert.deepEqual(tools.sort(), [], "the sandboxed host's start reaches these statically");
  // The one table it needs is there; each call loads its own tool from it.
  assert.ok(seen.includes("src/tools/loaders.ts"), seen.join(", "));
});

Deno.test("tools/host: the hosts' table of loaders names exactly the catalog's tools", async () => {
  const { TOOL_LOADERS } = await import("../../../src/tools/loaders.ts");
  const { registeredToolNames } = await import("../../../src/tools/catalog.ts");
  assert.deepEqual(Object.keys(TOOL_LOADERS).sort(), registeredToolNames().sort());
});
