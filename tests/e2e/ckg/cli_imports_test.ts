// A one-shot `deft ckg search-*` loads what a search needs, not the tool layer (it runs `deno info`).
import assert from "node:assert/strict";
Deno.test("cli: a search from the command line loads neither the tool catalog nor the tool host", async () => {
  // `deft ckg search-*` runs no tool: what src/cli/ckg.ts imports (statically, and the modules it
  // imports on the way to a search) must not reach src/tools/, whose host pulls in the sandbox's
  // policy modules; loading them cost a one-shot search (a miss above all) a third of its modules.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "src/cli/ckg.ts"],
    cwd: new URL("../../../", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { isDynamic?: boolean; code?: { specifier: string } }[];
    }[];
  };
  const byUrl = new Map(graph.modules.map((m) => [m.specifier, m]));
  const start = graph.modules.find((m) => m.specifier.endsWith("/src/cli/ckg.ts"))!;
  // The CLI module, its static imports, and everything statically reachable from the modules it
  // loads with import() (the graph, the formats, the workspace argument).
  const seen = new Set<string>([start.specifier]);
  const queue = [start.specifier];
  for (const dep of start.dependencies ?? []) {
    if (dep.isDynamic && dep.code) queue.push(dep.code.specifier);
  }
  while (queue.length > 0) {
    const url = queue.pop()!;
    seen.add(url);
    for (const dep of byUrl.get(url)?.dependencies ?? []) {
      const next = dep.code?.specifier;
      if (next && !dep.isDynamic && !seen.has(next)) queue.push(next);
    }
  }
  const tools = [...seen].filter((url) => url.includes("/src/tools/"));
  assert.deepEqual(tools, [], "a ckg search loads the tools");
  assert.ok([...seen].some((url) => url.endsWith("/src/ckg/graph.ts")));
});
