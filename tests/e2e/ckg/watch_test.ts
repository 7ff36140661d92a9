/**
 * A watched graph skips the file-system walk while nothing changes, and still sees every change
 * made before a search: by this process, by a child process, in new folders, in git's ignore
 * rules. When the watcher cannot vouch, searches walk as before.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import { REAL_FS, type SourceFs } from "../../../src/ckg/indexer.ts";
import { ChangeWatcher } from "../../../src/ckg/watch.ts";
import { tempDir, writeTree } from "../../helpers/ckg.ts";

/** A graph whose file system counts stats, so a test can tell whether a search walked. */
async function withWatchedGraph(
  files: Record<string, string>,
  fn: (graph: CodeGraph, root: string, stats: () => number) => Promise<void>,
  watchTrustMs?: number,
): Promise<void> {
  const ws = await tempDir();
  await using cache = await tempDir();
  await writeTree(ws.path, files);
  let count = 0;
  const fs: SourceFs = {
    ...REAL_FS,
    lstat: (path) => {
      count++;
      return REAL_FS.lstat(path);
    },
  };
  const graph = CodeGraph.open(ws.path, {
    ckgDir: cache.path,
    workers: 0,
    watch: true,
    watchTrustMs,
    fs,
  });
  try {
    // A graph searched once never watches (`deft tool ckg`); the second search starts the watch.
    await graph.search("search_function", "warm_up", undefined, { body: false });
    assert.equal(graph.watching, false, "one search does not set up a watch");
    await graph.search("search_function", "warm_up", undefined, { body: false });
    assert.ok(graph.watching, "inotify is available on the test machine");
    count = 0;
    await fn(graph, ws.path, () => {
      const n = count;
      count = 0;
      return n;
    });
  } finally {
    graph.close();
    await ws.remove();
  }
}

async function found(graph: CodeGraph, name: string, dir?: string): Promise<string[]> {
  const result = await graph.search("search_function", name, dir, { body: false });
  return result.matches.map((m) => `${m.symbol.path}:${m.symbol.startLine}`);
}

Deno.test("watch: unchanged searches skip the walk; any change brings it back", async () => {
  await withWatchedGraph({ "a.py": "def one(): pass\n", "b.py": "def two(): pass\n" }, async (
    graph,
    root,
    stats,
  ) => {
    assert.deepEqual(await found(graph, "one"), ["a.py:1"]);
    for (let i = 0; i < 5; i++) assert.deepEqual(await found(graph, "two"), ["b.py:1"]);
    assert.equal(stats(), 0, "nothing changed, nothing stat-ed");

    Deno.writeTextFileSync(`${root}/a.py`, "def one(): pass\ndef three(): pass\n");
    assert.deepEqual(await found(graph, "three"), ["a.py:2"]);
    assert.ok(stats() >= 2, "an edit makes the next search walk");
    assert.deepEqual(await found(graph, "three"), ["a.py:2"]);
    assert.equal(stats(), 0);

    // A build dropping a .pyc does not cost a walk.
    await Deno.writeTextFile(`${root}/a.cpython-311.pyc`, "\0\0");
    assert.deepEqual(await found(graph, "one"), ["a.py:1"]);
    assert.equal(stats(), 0);
  });
});

Deno.test("watch: changes made by another process just before a search are found", async () => {
  await withWatchedGraph({ "pkg/a.py": "def one(): pass\n" }, async (graph, root) => {
    assert.deepEqual(await found(graph, "one"), ["pkg/a.py:1"]);
    for (let i = 0; i < 20; i++) {
      // Append in place (no rename, the folder's mtime stays put), then search at once.
      const script = `printf 'def f${i}(): pass\\n' >> pkg/a.py`;
      const out = await new Deno.Command("bash", { args: ["-c", script], cwd: root }).output();
      assert.ok(out.success);
      assert.deepEqual(await found(graph, `f${i}`), [`pkg/a.py:${i + 2}`], `round ${i}`);
    }
    const script = "mkdir -p new/deep && printf 'def fresh(): pass\\n' > new/deep/n.py";
    assert.ok(
      (await new Deno.Command("bash", { args: ["-c", script], cwd: root }).output()).success,
    );
    assert.deepEqual(await found(graph, "fresh"), ["new/deep/n.py:1"]);
    await Deno.remove(`${root}/new`, { recursive: true });
    assert.deepEqual(await found(graph, "fresh"), []);
  });
});

Deno.test("watch: a folder search is fresh after a whole-tree search, not after an edit elsewhere", async () => {
  await withWatchedGraph({
    "x/a.py": "def a(): pass\n",
    "y/b.py": "def b(): pass\n",
  }, async (graph, root, stats) => {
    assert.deepEqual(await found(graph, "a"), ["x/a.py:1"]);
    stats();
    assert.deepEqual(await found(graph, "a", `${root}/x`), ["x/a.py:1"]);
    assert.equal(stats(), 0, "the whole-tree refresh covers the folder");
    await Deno.writeTextFile(`${root}/y/b.py`, "def b(): pass\ndef c(): pass\n");
    assert.deepEqual(await found(graph, "a", `${root}/x`), ["x/a.py:1"]);
    assert.ok(stats() > 0, "an edit anywhere makes the next search walk its folder");
    assert.deepEqual(await found(graph, "c"), ["y/b.py:2"]);
  });
});

Deno.test("watch: past the trust window a search walks even when no event came", async () => {
  await withWatchedGraph({ "a.py": "def one(): pass\n" }, async (graph, _root, stats) => {
    assert.deepEqual(await found(graph, "one"), ["a.py:1"]);
    stats();
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(await found(graph, "one"), ["a.py:1"]);
    assert.ok(stats() > 0, "a file system that never reports changes is still walked now and then");
  }, 20);
});

Deno.test("watch: a stopped watcher cannot vouch, so searches walk and stay right", async () => {
  const ws = await tempDir();
  const markers = await tempDir();
  try {
    const watcher = ChangeWatcher.start(ws.path, markers.path);
    assert.ok(watcher);
    assert.equal(await watcher.settle(), true);
    for (let i = 0; i < 20; i++) {
      const before: number = watcher.generation;
      // Written synchronously: its event cannot have been delivered before settle() starts.
      Deno.writeTextFileSync(`${ws.path}/a.py`, `def a${i}(): pass\n`, { append: true });
      assert.equal(await watcher.settle(), true);
      assert.ok(watcher.generation > before, `round ${i}: counted before settle returned`);
    }
    watcher.close();
    assert.equal(await watcher.settle(), false);
    assert.deepEqual([...Deno.readDirSync(markers.path)], [], "no marker is left behind");
  } finally {
    await ws.remove();
    await markers.remove();
  }
  assert.equal(ChangeWatcher.start("/nonexistent/deft-ckg", "/nonexistent/markers"), undefined);
});
