/**
 * The layer rules of docs/architecture.md, checked on the real import graph.
 *
 * The graph is Deno's own: `deno info --json` from main.ts, then from every module under src/
 * that main.ts does not reach (worker entries, scripts' helpers), until each one is in it. It
 * holds static imports, `import type`, re-exports and dynamic `import()` of a literal, each with
 * its line, so nothing here parses TypeScript by hand.
 *
 * Rules, top to bottom (a layer may import itself and anything below it, never above):
 *
 *   main.ts → cli → acp, report → batch → agent → gate → trajectory → llm, mcp → hooks → config → tools → ckg →
 *   policy →
 *   base files (src/env.ts, src/errors.ts, src/line_reader.ts, src/version.ts)
 *
 * llm and mcp share a level but do not import each other: the model clients and the MCP client
 * are independent (the agent joins them), and no module of either imports the other today. A
 * type-only import counts like any other, for layers and for cycles: it still ties the two
 * modules together. src/tools, src/ckg and src/policy never print: no `console.*`, no
 * `Deno.stdout` / `Deno.stderr`.
 */
import * as assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const ROOT_PATH = ROOT.pathname;

/** The layers, top first; a module's layer is the first whose test matches its path. */
const LAYERS: { name: string; rank: number; has: (path: string) => boolean }[] = [
  { name: "main.ts", rank: 0, has: (p) => p === "main.ts" },
  ...["cli", "batch", "agent", "trajectory"].map((dir, i) => ({
    name: `src/${dir}`,
    rank: i + 1,
    has: (p: string) => p.startsWith(`src/${dir}/`),
  })),
  // The gate pipeline every tool call passes (hooks, rules, the approval mode, the call plan):
  // below the sessions that assemble it, above the trajectory a replay's decisions come from.
  { name: "src/gate", rank: 3.5, has: (p) => p.startsWith("src/gate/") },
  // Reads what runs and batches recorded (trajectory, batch); only the CLI uses it.
  { name: "src/report", rank: 1.5, has: (p) => p.startsWith("src/report/") },
  // The Agent Client Protocol glue of `deft acp`: below the command, above the agent it drives.
  { name: "src/acp", rank: 1.5, has: (p) => p.startsWith("src/acp/") },
  // Same rank; the peer rule below keeps them apart.
  { name: "src/llm", rank: 5, has: (p) => p.startsWith("src/llm/") },
  { name: "src/mcp", rank: 5, has: (p) => p.startsWith("src/mcp/") },
  // The hook runner: below the agent that fires hooks, above the config and policy it reads.
  { name: "src/hooks", rank: 5.5, has: (p) => p.startsWith("src/hooks/") },
  ...["config", "tools", "ckg", "policy"].map((dir, i) => ({
    name: `src/${dir}`,
    rank: i + 6,
    has: (p: string) => p.startsWith(`src/${dir}/`),
  })),
  // Between the tools (whose container host uses it) and the code graph; it uses the policy.
  { name: "src/container", rank: 7.5, has: (p) => p.startsWith("src/container/") },
  // Traces through Deno's OpenTelemetry exporter: every layer above may open a span.
  { name: "src/telemetry", rank: 9.5, has: (p) => p.startsWith("src/telemetry/") },
  {
    name: "base files",
    rank: 10,
    has: (p) => ["src/env.ts", "src/errors.ts", "src/line_reader.ts", "src/version.ts"].includes(p),
  },
];

/** The folders that never print. */
const SILENT = [
  "src/tools/",
  "src/ckg/",
  "src/policy/",
  "src/container/",
  "src/report/",
  "src/telemetry/",
];

/**
 * Modules in a silent folder that may write to the standard streams. `deft __tool-host`'s relay
 * is a process entry, not a tool: its stdout is the message channel to the Deft that started it,
 * and its stderr is how it reports a broken channel before exiting.
 */
// The network forwarder is a program of its own, started inside the sandbox: its one line on
// stdout ("ready") is how its starter knows it listens.
const MAY_PRINT = new Set(["src/tools/host/relay.ts", "src/policy/network/forwarder.ts"]);

/** One import: `from` imports `to` (both relative to the repository root) at `line`. */
interface Edge {
  from: string;
  to: string;
  specifier: string;
  line: number;
}

interface InfoModule {
  specifier: string;
  mediaType?: string;
  dependencies?: {
    specifier: string;
    code?: { specifier: string; span: { start: { line: number } } };
    type?: { specifier: string; span: { start: { line: number } } };
  }[];
}

const SOURCE = /\.(ts|tsx|js|mjs)$/;

/** `path` relative to the repository root, or undefined outside main.ts and src/. */
function local(specifier: string): string | undefined {
  if (!specifier.startsWith("file://")) return undefined;
  const path = decodeURIComponent(new URL(specifier).pathname);
  if (!path.startsWith(ROOT_PATH)) return undefined;
  const rel = path.slice(ROOT_PATH.length);
  return (rel === "main.ts" || rel.startsWith("src/")) && SOURCE.test(rel) ? rel : undefined;
}

async function info(root: string): Promise<InfoModule[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: ROOT_PATH,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`deno info ${root} failed:\n${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(new TextDecoder().decode(out.stdout)).modules;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT_PATH}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await sourceFiles(path));
    else if (entry.isFile && SOURCE.test(entry.name)) found.push(path);
  }
  return found;
}

/** Every module of main.ts and src/, and every import between two of them. */
async function importGraph(): Promise<{ modules: Set<string>; edges: Edge[] }> {
  const all = ["main.ts", ...await sourceFiles("src")].sort();
  const seen = new Map<string, InfoModule>();
  for (const root of all) {
    if (seen.has(root)) continue;
    for (const module of await info(root)) {
      const path = local(module.specifier);
      if (path && !seen.has(path)) seen.set(path, module);
    }
    assert.ok(seen.has(root), `deno info did not list its own root ${root}`);
  }
  const edges: Edge[] = [];
  for (const [from, module] of seen) {
    for (const dep of module.dependencies ?? []) {
      // A module imported both as a value and as a type is listed under both; one edge is enough.
      const target = dep.code ?? dep.type;
      const to = target && local(target.specifier);
      if (to) {
        edges.push({ from, to, specifier: dep.specifier, line: target.span.start.line + 1 });
      }
    }
  }
  return { modules: new Set(all), edges };
}

function layerOf(path: string) {
  return LAYERS.find((layer) => layer.has(path));
}

/** Why `edge` breaks the layer order, or undefined when it keeps it. */
function layerBreak(edge: Edge): string | undefined {
  const from = layerOf(edge.from);
  const to = layerOf(edge.to);
  if (!from) return `${edge.from} is in no layer: add its folder to the layer order`;
  if (!to) return `${edge.to} is in no layer: add its folder to the layer order`;
  if (from.name === to.name) return undefined;
  if (to.rank < from.rank) return `${from.name} is below ${to.name} and may not import it`;
  if (to.rank === from.rank) {
    return `${from.name} and ${to.name} are peers and do not import each other`;
  }
  return undefined;
}

/** The strongly connected parts of the graph with more than one module, or a self-import. */
function cycles(modules: Set<string>, edges: Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const m of modules) next.set(m, []);
  for (const e of edges) next.get(e.from)?.push(e.to);
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const start of modules) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const targets = next.get(frame.node) ?? [];
      if (frame.i < targets.length) {
        const to = targets[frame.i++];
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, i: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const part: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          part.push(member);
        } while (member !== frame.node);
        if (part.length > 1 || targets.includes(frame.node)) found.push(part.sort());
      }
    }
  }
  return found;
}

const graph = await importGraph();
const where = (e: Edge) => `${e.from}:${e.line} imports "${e.specifier}" (${e.to})`;

Deno.test("architecture: the graph covers main.ts and every module under src/", () => {
  assert.ok(graph.modules.has("main.ts"));
  assert.ok(graph.modules.size > 100, `only ${graph.modules.size} modules found`);
  // Dynamic imports are in it: main.ts loads the CLI lazily.
  assert.ok(graph.edges.some((e) => e.from === "main.ts" && e.to.startsWith("src/cli/")));
});

Deno.test("architecture: no import goes up the layer order", () => {
  const broken = graph.edges.flatMap((e) => {
    const why = layerBreak(e);
    return why ? [`${where(e)}: ${why}`] : [];
  });
  assert.deepEqual(broken, [], `imports that break the layer order:\n  ${broken.join("\n  ")}`);
});

Deno.test("architecture: no import cycles", () => {
  const found = cycles(graph.modules, graph.edges).map((part) => {
    const inside = new Set(part);
    const links = graph.edges.filter((e) => inside.has(e.from) && inside.has(e.to)).map(where);
    return `cycle through ${part.join(", ")}:\n    ${links.join("\n    ")}`;
  });
  assert.deepEqual(found, [], `import cycles (rule: no cycles):\n  ${found.join("\n  ")}`);
});

/** `text` with comments, strings and template text blanked out, so only code is searched. */
function codeOnly(text: string): string {
  return text.replace(
    /\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`/g,
    (m) => m.replace(/[^\n]/g, " "),
  );
}

Deno.test("architecture: src/tools, src/ckg and src/policy never print", async () => {
  const printing = /\bconsole\s*\.\s*\w+|\bDeno\s*\.\s*(?:stdout|stderr)\b/g;
  const found: string[] = [];
  for (const path of graph.modules) {
    if (!SILENT.some((dir) => path.startsWith(dir)) || MAY_PRINT.has(path)) continue;
    const lines = codeOnly(await Deno.readTextFile(`${ROOT_PATH}${path}`)).split("\n");
    lines.forEach((line, i) => {
      for (const m of line.matchAll(printing)) {
        found.push(`${path}:${i + 1} uses ${m[0]}: tools, ckg and policy never print`);
      }
    });
  }
  assert.deepEqual(found, [], `modules that print:\n  ${found.join("\n  ")}`);
});

Deno.test("architecture: the console (src/cli/console/) imports nothing from the commands above it", () => {
  // The commands and their option table use the console; the console never reaches back (it once
  // read the output formats from cli/spec.ts, which itself reads the colour modes from here).
  const back = graph.edges.filter((e) =>
    e.from.startsWith("src/cli/console/") && e.to.startsWith("src/cli/") &&
    !e.to.startsWith("src/cli/console/")
  ).map(where);
  assert.deepEqual(back, [], `the console imports commands:\n  ${back.join("\n  ")}`);
});

/** Lines a source file may have: past this, it does more than one job (issue 49). */
const MAX_FILE_LINES = 600;

const SOURCE_FILES = await sourceFiles("src");

Deno.test("architecture: no source file over 600 lines", () => {
  const long = SOURCE_FILES.filter((path) => path.endsWith(".ts")).flatMap((path) => {
    const lines = Deno.readTextFileSync(new URL(path, ROOT)).split("\n").length - 1;
    return lines > MAX_FILE_LINES ? [`${path}: ${lines} lines`] : [];
  });
  assert.deepEqual(long, [], `split these by job:\n  ${long.join("\n  ")}`);
});

/** `dir` and every folder below it. */
const folders = (dir: string): string[] => [
  dir,
  ...[...Deno.readDirSync(new URL(dir, ROOT))].filter((e) => e.isDirectory)
    .flatMap((e) => folders(`${dir}/${e.name}`)),
];

Deno.test("architecture: every src folder of more than five entries has a README.md", () => {
  const missing = folders("src").filter((dir) => {
    const entries = [...Deno.readDirSync(new URL(dir, ROOT))].map((e) => e.name);
    return entries.length > 5 && !entries.includes("README.md");
  });
  assert.deepEqual(missing, [], `folders without a README.md:\n  ${missing.join("\n  ")}`);
});

Deno.test("architecture: a folder's README.md names each of its files and folders, and no file gone", () => {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const wrong: string[] = [];
  for (const dir of folders("src")) {
    const entries = [...Deno.readDirSync(new URL(dir, ROOT))];
    const names = entries.map((e) => e.name);
    if (!names.includes("README.md")) continue;
    const readme = Deno.readTextFileSync(new URL(`${dir}/README.md`, ROOT));
    if (entries.length > 5) {
      for (const entry of entries) {
        if (entry.name === "README.md") continue;
        const named = new RegExp(`(?<![\\w-])${escape(entry.name)}(?![\\w-])`).test(readme);
        if (!named) wrong.push(`${dir}/README.md does not name ${entry.name}`);
      }
    }
    // The table's first column lists files of this folder: each one is there.
    for (const line of readme.split("\n").filter((l) => l.startsWith("|"))) {
      const cell = line.split("|")[1] ?? "";
      for (const [, listed] of cell.matchAll(/`([\w.-]+\.(?:ts|js|gz))`/g)) {
        if (!names.includes(listed)) wrong.push(`${dir}/README.md lists ${listed}, not there`);
      }
    }
  }
  assert.deepEqual(wrong, [], `bring each README.md up to date:\n  ${wrong.join("\n  ")}`);
});
