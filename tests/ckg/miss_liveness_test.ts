/**
 * What a one-shot search (`deft ckg search-*`: a fresh graph, the folder listings the database
 * keeps) promises about changes since the last one (issue 51): a file created, deleted or renamed
 * changes its folder's mtime, so the kept listing is read again; a file edited in place leaves
 * its folder alone, so every file's size and mtime are checked too. An edit is seen when it
 * changes the file's size or mtime (or the file was indexed within 2 s of its mtime, see
 * racy_mtime_test.ts); an edit that keeps both the size and the mtime (`touch -d` back to the old
 * time) is not, as for git and make.
 *
 * Every mtime here is set well in the past (distinct values), so no answer comes from the guard
 * that re-reads anything changed in the last two seconds: each is the folder or file check alone.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import type { SearchResult } from "../../src/ckg/search.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

/** A time `minutes` ago, whole seconds (every file system keeps those). */
function minutesAgo(minutes: number): Date {
  return new Date(Math.floor(Date.now() / 1000 - minutes * 60) * 1000);
}

/** Sets the mtime of every path (files and folders) to `minutes` ago. */
async function age(paths: string[], minutes: number): Promise<void> {
  const when = minutesAgo(minutes);
  for (const path of paths) await Deno.utime(path, when, when);
}

/** One search as one `deft ckg` process makes it: a fresh graph on the kept database. */
async function searchOnce(ws: string, cache: string, name: string): Promise<SearchResult> {
  const graph = CodeGraph.open(ws, { ckgDir: cache, workers: 0 });
  try {
    return await graph.search("search_function", name, ws, { body: false });
  } finally {
    graph.close();
  }
}

const paths = (result: SearchResult) => result.matches.map((m) => m.symbol.path).sort();

/** A workspace indexed once, every file and folder aged, and the listings kept. */
async function indexedTree(ws: string, cache: string): Promise<void> {
  await writeTree(ws, {
    "app/main.py": "def start():\n    return 1\n",
    "app/util.py": "def helper():\n    return 2\n",
    "lib/pkg/tool.py": "def tool_run():\n    return 3\n",
    "lib/other.py": "def other():\n    return 4\n",
  });
  await age([
    `${ws}/app/main.py`,
    `${ws}/app/util.py`,
    `${ws}/lib/pkg/tool.py`,
    `${ws}/lib/other.py`,
    `${ws}/app`,
    `${ws}/lib/pkg`,
    `${ws}/lib`,
    ws,
  ], 120);
  const first = await searchOnce(ws, cache, "start");
  assert.deepEqual(paths(first), ["app/main.py"]);
}

Deno.test("miss liveness: a file edited in place (same size, a new mtime) is seen by the next search", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await indexedTree(ws.path, cache.path);
  const miss = await searchOnce(ws.path, cache.path, "rename");
  assert.equal(miss.matches.length, 0);
  // `helper` becomes `rename`: the same number of bytes, written over the file in place, so its
  // folder's mtime does not move; the folder is aged again anyway, to be sure.
  const util = `${ws.path}/app/util.py`;
  const before = (await Deno.stat(util)).size;
  await Deno.writeTextFile(util, "def rename():\n    return 2\n");
  assert.equal((await Deno.stat(util)).size, before);
  await age([util], 60);
  await age([`${ws.path}/app`], 120);
  const hit = await searchOnce(ws.path, cache.path, "rename");
  assert.deepEqual(paths(hit), ["app/util.py"], "the in-place edit was not seen");
  const gone = await searchOnce(ws.path, cache.path, "helper");
  assert.equal(gone.matches.length, 0, "the name the edit removed is still found");
});

Deno.test("miss liveness: a new file in a listed folder is seen by the next search", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await indexedTree(ws.path, cache.path);
  assert.equal((await searchOnce(ws.path, cache.path, "fresh_name")).matches.length, 0);
  await writeTree(ws.path, { "app/added.py": "def fresh_name():\n    return 5\n" });
  await age([`${ws.path}/app/added.py`], 90);
  await age([`${ws.path}/app`], 60);
  const hit = await searchOnce(ws.path, cache.path, "fresh_name");
  assert.deepEqual(paths(hit), ["app/added.py"], "the new file was not seen");
});

Deno.test("miss liveness: a deleted file's names are gone at the next search", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await indexedTree(ws.path, cache.path);
  assert.deepEqual(paths(await searchOnce(ws.path, cache.path, "helper")), ["app/util.py"]);
  await Deno.remove(`${ws.path}/app/util.py`);
  await age([`${ws.path}/app`], 60);
  const miss = await searchOnce(ws.path, cache.path, "helper");
  assert.equal(miss.matches.length, 0, "the deleted file's function is still found");
});

Deno.test("miss liveness: a renamed folder's files are found under the new name only", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await indexedTree(ws.path, cache.path);
  assert.deepEqual(paths(await searchOnce(ws.path, cache.path, "tool_run")), ["lib/pkg/tool.py"]);
  await Deno.rename(`${ws.path}/lib/pkg`, `${ws.path}/lib/moved`);
  await age([`${ws.path}/lib`], 60);
  const hit = await searchOnce(ws.path, cache.path, "tool_run");
  assert.deepEqual(paths(hit), ["lib/moved/tool.py"], "the renamed folder was not seen");
});
