/**
 * What `deft interactive` loads before its prompt (issue 51: launch to prompt ≤ 2× `deft tool
 * task_done`). Deno loads a module's static imports before running it, so everything statically
 * reachable from the start path is paid for before the prompt is drawn. The path is main.ts's
 * first round of dynamic imports, then dispatch.ts's import of interactive.ts (the fast path,
 * src/cli/fast.ts); from there only static imports count. The graph is Deno's own (`deno info
 * --json`), as in architecture_test.ts.
 *
 * The packages and Node modules it may reach are listed with their reason; anything else (a
 * provider SDK, commander, npm:yaml, node:http, the MCP SDK, tree-sitter, …) must be loaded with
 * `import()` where it is first used.
 *
 * The prompt is drawn before the session is assembled (src/cli/interactive/chat.ts, loaded with
 * `import()` behind it): the start path reaches none of the agent, the tools, the gates, the
 * model client, the MCP client, the trajectory and checkpoint store, nor the config schema.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../../", import.meta.url);

/** The dynamic imports the interactive start takes, in order: from main.ts to interactive.ts. */
const TAKEN: [string, string][] = [
  ["main.ts", "src/tools/worker_scope.ts"],
  ["main.ts", "src/tools/host/entry_points.ts"],
  ["main.ts", "src/cli/invocation_dir.ts"],
  ["main.ts", "src/cli/io.ts"],
  ["main.ts", "src/cli/fast.ts"],
  ["main.ts", "src/cli/dispatch.ts"],
  ["src/cli/dispatch.ts", "src/cli/interactive.ts"],
];

/** What the start may load outside Deft's own code, and why it cannot wait. */
const ALLOWED: Record<string, string> = {
  "node:path": "paths, everywhere",
  "node:process": "the composer's terminal (node:readline's keypress events)",
  "node:readline": "the composer (src/cli/interactive/line_reader.ts)",
  "node:fs": "pinned reads of workspace files (the gate's preview, the host workplace)",
  "node:net": "isIP, for the config's network list (src/policy/network/rules.ts)",
};

/**
 * Deft's own folders and modules the prompt must not wait for: they are the session's, assembled
 * behind the prompt. A prefix ending in "/" is a folder; the exceptions are named with why.
 */
const ASSEMBLED_BEHIND: string[] = [
  "src/agent/",
  "src/tools/",
  "src/gate/",
  "src/llm/",
  "src/mcp/",
  "src/trajectory/",
  "src/hooks/",
  "src/container/",
  "src/ckg/",
  "src/config/load.ts",
  "src/config/trust.ts",
  "src/cli/interactive/chat.ts",
  "src/cli/interactive/commands.ts",
  "src/cli/session_place.ts",
  "src/cli/resume.ts",
];
const ALLOWED_OWN: Record<string, string> = {
  "src/tools/names.ts": "the tool names alone, to check agents.*.tools before the prompt",
  "src/gate/modes.ts": "the approval modes' names, checked before the prompt",
  "src/llm/provider_check.ts": "what a provider lacks (a base URL), said before the prompt",
  "src/tools/worker_scope.ts": "main.ts: whether this is the tool worker (every start asks)",
  "src/tools/host/entry_points.ts": "main.ts: the tool host's entry names (every start asks)",
};

interface Graph {
  modules: {
    specifier: string;
    dependencies?: {
      specifier: string;
      isDynamic?: boolean;
      code?: { specifier: string };
    }[];
  }[];
}

async function graphOf(root: string): Promise<Graph> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: ROOT.pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** `npm:@scope/name@1.2.3/sub` → `npm:@scope/name`; a file URL → its path under the root. */
function short(specifier: string): string {
  if (specifier.startsWith(ROOT.href)) return specifier.slice(ROOT.href.length);
  const npm = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)/.exec(specifier);
  return npm ? `npm:${npm[1]}` : specifier;
}

Deno.test("interactive start: nothing heavy is statically reachable before the prompt (no provider SDK, commander, yaml, node:http)", async () => {
  const graph = await graphOf("main.ts");
  const edges = new Map<string, { to: string; dynamic: boolean }[]>();
  for (const m of graph.modules) {
    edges.set(
      short(m.specifier),
      (m.dependencies ?? []).flatMap((d) =>
        d.code ? [{ to: short(d.code.specifier), dynamic: d.isDynamic === true }] : []
      ),
    );
  }
  for (const [from, to] of TAKEN) {
    assert.ok(
      edges.get(from)?.some((e) => e.to === to && e.dynamic),
      `the start path changed: ${from} no longer imports ${to} with import(); update TAKEN`,
    );
  }
  // Breadth first over static imports, remembering who first reached each module.
  const reachedFrom = new Map<string, string | null>([["main.ts", null]]);
  const queue = ["main.ts"];
  for (const [from, to] of TAKEN) {
    if (!reachedFrom.has(to)) {
      reachedFrom.set(to, from);
      queue.push(to);
    }
  }
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const e of edges.get(at) ?? []) {
      if (e.dynamic || reachedFrom.has(e.to)) continue;
      reachedFrom.set(e.to, at);
      queue.push(e.to);
    }
  }
  const chain = (m: string) => {
    const links = [m];
    for (let at = reachedFrom.get(m); at; at = reachedFrom.get(at)) links.push(at);
    return links.join(" ← ");
  };
  const outside = [...reachedFrom.keys()].filter((m) => !m.startsWith("src/") && m !== "main.ts");
  const unexpected = outside.filter((m) => !Object.hasOwn(ALLOWED, m));
  assert.deepEqual(
    unexpected.map(chain),
    [],
    "the interactive start loads these before its prompt; import them with import() where " +
      "they are first used (or, if the prompt truly needs one, add it to ALLOWED with why)",
  );
  assert.ok(reachedFrom.has("src/cli/interactive.ts"));
  const session = [...reachedFrom.keys()].filter((m) =>
    !Object.hasOwn(ALLOWED_OWN, m) &&
    ASSEMBLED_BEHIND.some((p) => p.endsWith("/") ? m.startsWith(p) : m === p)
  );
  assert.deepEqual(
    session.map(chain),
    [],
    "the prompt waits for these parts of the session: load them with import() behind it " +
      "(src/cli/interactive/chat.ts), not statically from the start path",
  );
});
