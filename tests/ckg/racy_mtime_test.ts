/**
 * The indexer's racy-mtime guard: a file whose mtime is too recent to trust is re-read at the next
 * refresh even when its size and mtime look unchanged, because a second write within the same mtime
 * tick leaves both the same.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

Deno.test("ckg: a same-size rewrite within the same mtime tick is still seen (racy mtime guard)", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  await writeTree(ws.path, { "a.py": "def one():\n    return 1\n" });
  // One fixed, recent mtime for both versions: what a filesystem with coarse timestamps shows
  // when a file is written twice within one tick.
  const tick = new Date(Date.now());
  await Deno.utime(`${ws.path}/a.py`, tick, tick);
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    const first = await graph.search("search_function", "one", undefined, { body: false });
    assert.equal(first.matches.length, 1);
    // Same size, same mtime, different content.
    await Deno.writeTextFile(`${ws.path}/a.py`, "def two():\n    return 2\n");
    await Deno.utime(`${ws.path}/a.py`, tick, tick);
    const second = await graph.search("search_function", "two", undefined, { body: false });
    assert.equal(
      second.matches.length,
      1,
      "the rewrite was missed: a recent mtime was trusted as if it could not change again",
    );
    const stale = await graph.search("search_function", "one", undefined, { body: false });
    assert.equal(stale.matches.length, 0);
  } finally {
    graph.close();
  }
});
