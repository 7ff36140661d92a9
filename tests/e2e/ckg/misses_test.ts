/**
 * Folders left out by policy: the graph's report names each with its reason, and so does
 * `deft ckg index`, run as a user runs it.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import { tempDir, writeTree } from "../../helpers/ckg.ts";

Deno.test("misses: folders left out by policy are reported with the reason", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, {
    "src/app.py": "def main():\n    pass\n",
    "dist/bundle.js": "function built() {}\n",
    "build/lib/x.py": "def copied():\n    pass\n",
    "web/node_modules/dep/index.js": "function dep() {}\n",
    "env/pyvenv.cfg": "home = /usr/bin\n",
    "env/lib/site.py": "def installed():\n    pass\n",
  });
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    const report = await graph.refresh();
    assert.deepEqual(
      report.skippedDirs.map((d) => `${d.path}: ${d.reason}`).sort(),
      [
        "build: build output",
        "dist: build output",
        "env: a Python virtualenv",
        "web/node_modules: dependencies",
      ],
    );
    assert.equal(graph.totals().indexed, 1);
  } finally {
    graph.close();
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "ckg", "index", ws.path, "-w", ws.path],
    env: { DEFT_CACHE_DIR: cache.path },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.match(
    text,
    /Skipped folders \(not the project.s own code\):\n(?: {2}.*\n)*? {2}build\/: build output\n/,
  );
  assert.match(text, /web\/node_modules\/: dependencies/);
});
