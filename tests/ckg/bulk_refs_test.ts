/**
 * A first index of a large tree builds the refs indexes once at the end instead of row by row:
 * references are found all the same, and a process that stops before the end leaves them to the
 * next open.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { GraphStore } from "../../src/ckg/store.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

function refIndexes(path: string): string[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'refs' ORDER BY name",
    ).all().map((row) => String(row.name));
  } finally {
    db.close();
  }
}

Deno.test("bulk refs: a first index builds the refs indexes at the end; callers are found", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(ws.path, {
    "a.c": "int helper(int x) { return x + 1; }\n",
    "b.c": "int helper(int x);\nint user(void) {\n  return helper(2);\n}\n",
  });
  // Any size counts as large here.
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0, bulkBytes: 1 });
  try {
    await graph.refresh();
    assert.deepEqual(refIndexes(graph.databasePath), ["refs_by_file", "refs_by_name"]);
    const found = await graph.searchEdges("search_callers", "helper", undefined, { body: false });
    assert.deepEqual(
      found.callers.map((c) => `${c.symbol.path} ${c.symbol.name}@${c.lines.join(",")}`),
      [
        "b.c user@3",
      ],
    );
  } finally {
    graph.close();
  }
});

Deno.test("bulk refs: refs indexes a stopped first index left out are built on the next open", async () => {
  await using cache = await tempDir("deft-ckg-cache-");
  const path = `${cache.path}/graph.db`;
  const store = GraphStore.open(path, "/w");
  store.suspendRefIndexes();
  store.close(); // as if the process stopped before the end of its first index
  assert.deepEqual(refIndexes(path), []);
  GraphStore.open(path, "/w").close();
  assert.deepEqual(refIndexes(path), ["refs_by_file", "refs_by_name"]);
});
