/**
 * The graph stays current: edits, additions and deletions show up in the next search without an
 * explicit re-index; only changed files are re-parsed; bad input is reported and the rest indexed.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CodeGraph } from "../../../src/ckg/graph.ts";
import { REAL_FS, type SourceFs } from "../../../src/ckg/indexer.ts";
import { MAX_SOURCE_BYTES } from "../../../src/ckg/content.ts";
import { describeSymbol, LANGS_DIR, tempDir, writeTree } from "../../helpers/ckg.ts";
import { git } from "../../helpers/repo.ts";

const PAST = new Date(Date.now() - 60_000);

async function withGraph(
  files: Record<string, string | Uint8Array>,
  fn: (graph: CodeGraph, root: string) => Promise<void>,
  options: Parameters<typeof CodeGraph.open>[1] = {},
): Promise<void> {
  const ws = await tempDir();
  const cache = await tempDir();
  await writeTree(ws.path, files);
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0, ...options });
  try {
    await fn(graph, ws.path);
  } finally {
    graph.close();
    await ws.remove();
    await cache.remove();
  }
}

async function names(graph: CodeGraph, command: Parameters<CodeGraph["search"]>[0], name: string) {
  const result = await graph.search(command, name, undefined, { body: false });
  return result.matches.map((m) => `${m.symbol.path}:${m.symbol.startLine}`);
}

for (const watch of [false, true]) {
  const mode = watch ? " (watched)" : "";
  Deno.test(`graph${mode}: an edit between two searches is found without re-indexing`, async () => {
    await withGraph({ "pkg/a.py": "def one():\n    return 1\n" }, async (graph, root) => {
      assert.deepEqual(await names(graph, "search_function", "one"), ["pkg/a.py:1"]);
      assert.deepEqual(await names(graph, "search_function", "two"), []);
      await Deno.writeTextFile(
        `${root}/pkg/a.py`,
        "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
      );
      assert.deepEqual(await names(graph, "search_function", "two"), ["pkg/a.py:5"]);
      // Same size, same millisecond: the mtime may not move, the content hash still tells.
      await Deno.writeTextFile(
        `${root}/pkg/a.py`,
        "def uno():\n    return 1\n\n\ndef dos():\n    return 2\n",
      );
      assert.deepEqual(await names(graph, "search_function", "dos"), ["pkg/a.py:5"]);
      assert.deepEqual(await names(graph, "search_function", "two"), []);
      const result = await graph.search("search_function", "dos");
      assert.equal(result.matches[0].body, "def dos():\n    return 2");
    }, { watch });
  });
}

for (const watch of [false, true]) {
  const mode = watch ? " (watched)" : "";
  Deno.test(`graph${mode}: added, deleted and renamed files are followed`, async () => {
    await withGraph(
      { "a.py": "def alpha(): pass\n", "b.py": "def beta(): pass\n" },
      async (graph, root) => {
        assert.deepEqual(await names(graph, "search_function", "beta"), ["b.py:1"]);
        await Deno.remove(`${root}/b.py`);
        await Deno.mkdir(`${root}/sub`);
        await Deno.rename(`${root}/a.py`, `${root}/sub/renamed.py`);
        await Deno.writeTextFile(`${root}/sub/c.py`, "class Gamma:\n    def go(self): pass\n");
        assert.deepEqual(await names(graph, "search_function", "beta"), []);
        assert.deepEqual(await names(graph, "search_function", "alpha"), ["sub/renamed.py:1"]);
        assert.deepEqual(await names(graph, "search_class_method", "go"), ["sub/c.py:2"]);
        const totals = graph.totals();
        assert.equal(totals.files, 2);
        assert.deepEqual(totals.symbols, { function: 1, class: 1, method: 1 });
      },
      { watch },
    );
  });
}

Deno.test("graph: only changed files are read and parsed", async () => {
  const reads: string[] = [];
  const fs: SourceFs = {
    ...REAL_FS,
    readFile: (path) => {
      reads.push(path.slice(path.lastIndexOf("/") + 1));
      return REAL_FS.readFile(path);
    },
  };
  await withGraph({ "a.py": "def a(): pass\n", "b.py": "def b(): pass\n" }, async (graph, root) => {
    for (const f of ["a.py", "b.py"]) await Deno.utime(`${root}/${f}`, PAST, PAST);
    let report = await graph.refresh();
    assert.equal(report.parsed, 2);
    reads.length = 0;
    report = await graph.refresh();
    assert.deepEqual(reads, [], "nothing changed, nothing read");
    assert.equal(report.unchanged, 2);
    // A touch changes the mtime but not the content: read and hashed, not parsed.
    const later = new Date(PAST.getTime() + 1000);
    await Deno.utime(`${root}/a.py`, later, later);
    report = await graph.refresh();
    assert.deepEqual([report.parsed, report.touched, report.unchanged], [0, 1, 1]);
    await Deno.writeTextFile(`${root}/b.py`, "def b2(): pass\n");
    reads.length = 0;
    report = await graph.refresh();
    assert.deepEqual(reads, ["b.py"]);
    assert.equal(report.parsed, 1);
  }, { fs });
});

for (const watch of [false, true]) {
  const mode = watch ? " (watched)" : "";
  Deno.test(`graph${mode}: searching a folder refreshes and searches only that folder`, async () => {
    await withGraph({
      "a_b/x.py": "def f(): pass\n",
      "axb/y.py": "def f(): pass\n",
      "a_b/deep/z.py": "def f(): pass\n",
    }, async (graph, root) => {
      const result = await graph.search("search_function", "f", `${root}/a_b`, { body: false });
      assert.deepEqual(result.matches.map((m) => m.symbol.path), ["a_b/deep/z.py", "a_b/x.py"]);
      assert.equal(graph.totals(`${root}/axb`).files, 0, "the other folder was not indexed");
      assert.equal((await names(graph, "search_function", "f")).length, 3);
      assert.throws(() => graph.scopeOf("/"), /outside the workspace/);
    }, { watch });
  });
}

Deno.test("graph: bad input is reported clearly and everything else is indexed", async () => {
  const minified = "function m(){return 1}var a=".repeat(190_000) + "1;\n";
  const badUtf8 = new Uint8Array([
    ...new TextEncoder().encode("# caf"),
    0xe9,
    0xff,
    ...new TextEncoder().encode("\ndef survives_bad_bytes():\n    return 1\n"),
  ]);
  await withGraph({
    "good.py": "def good():\n    return 1\n",
    "broken.py":
      "def before():\n    pass\n\ndef broken(:\n    pass\n\ndef after():\n    return 2\n",
    "bundle.min.js": minified,
    "latin1.py": badUtf8,
    "fake.py": new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0]),
    "src/keep.ts": "export function kept(): void {}\n",
  }, async (graph, root) => {
    assert.ok(minified.length > 5_000_000);
    await Deno.symlink(".", `${root}/src/loop`);
    await Deno.symlink("self", `${root}/self`);
    await Deno.symlink("/etc/hostname", `${root}/outside.py`);
    await Deno.symlink("src/keep.ts", `${root}/inside.ts`);
    const report = await graph.refresh();
    assert.deepEqual(report.failed, []);
    assert.deepEqual(report.syntaxErrors, ["broken.py"]);
    assert.deepEqual(report.skipped.map((s) => s.path).sort(), ["bundle.min.js", "fake.py"]);
    assert.match(report.skipped.find((s) => s.path === "bundle.min.js")!.reason, /^minified/);
    assert.equal(report.skipped.find((s) => s.path === "fake.py")!.reason, "binary");
    for (const name of ["good", "before", "after", "survives_bad_bytes", "kept"]) {
      assert.equal((await names(graph, "search_function", name)).length > 0, true, name);
    }
    assert.deepEqual(await names(graph, "search_function", "kept"), [
      "inside.ts:1",
      "src/keep.ts:1",
    ]);
    const latin = await graph.search("search_function", "survives_bad_bytes");
    assert.equal(latin.matches[0].body, "def survives_bad_bytes():\n    return 1");
    const totals = graph.totals();
    assert.equal(totals.withSyntaxErrors, 1);
    assert.deepEqual(totals.skipped.map((f) => f.path), ["bundle.min.js", "fake.py"]);
    // A search for a name in a skipped file says which files were not indexed.
    const miss = await graph.search("search_function", "m");
    assert.deepEqual(miss.unindexed.map((f) => f.path), ["bundle.min.js", "fake.py"]);
  });
});

Deno.test("graph: a file over the size limit is skipped without being read", async () => {
  const reads: string[] = [];
  const fs: SourceFs = {
    ...REAL_FS,
    readFile: (path) => {
      reads.push(path.slice(path.lastIndexOf("/") + 1));
      return REAL_FS.readFile(path);
    },
  };
  await withGraph({ "small.py": "def small(): pass\n" }, async (graph, root) => {
    await Deno.writeFile(`${root}/huge.c`, new Uint8Array(MAX_SOURCE_BYTES + 1).fill(10));
    const report = await graph.refresh();
    assert.deepEqual(report.skipped, [{ path: "huge.c", reason: "larger than 16 MB" }]);
    assert.deepEqual(reads, ["small.py"]);
  }, { fs });
});

Deno.test("graph: a file deleted between listing and reading simply drops out", async () => {
  let root = "";
  const fs: SourceFs = {
    ...REAL_FS,
    readFile: async (path) => {
      if (path.endsWith("/doomed.py")) await Deno.remove(path);
      return REAL_FS.readFile(path);
    },
  };
  await withGraph(
    { "doomed.py": "def doomed(): pass\n", "ok.py": "def ok(): pass\n" },
    async (graph, r) => {
      root = r;
      const report = await graph.refresh();
      assert.deepEqual(report.failed, []);
      assert.equal(report.parsed, 1);
      assert.deepEqual(await names(graph, "search_function", "doomed"), []);
      assert.deepEqual(await names(graph, "search_function", "ok"), ["ok.py:1"]);
    },
    { fs },
  );
  assert.ok(root);
});

Deno.test("graph: an unreadable file fails clearly, is retried, and the rest is indexed", async () => {
  // Tests run as root, where chmod 000 does not stop reads: the file system seam refuses instead.
  let locked = true;
  const fs: SourceFs = {
    ...REAL_FS,
    readFile: (path) =>
      locked && path.endsWith("/secret.py")
        ? Promise.reject(new Deno.errors.PermissionDenied("Permission denied (os error 13)"))
        : REAL_FS.readFile(path),
  };
  await withGraph(
    { "secret.py": "def hidden(): pass\n", "open.py": "def visible(): pass\n" },
    async (graph) => {
      const report = await graph.refresh();
      assert.deepEqual(report.failed, [{
        path: "secret.py",
        error: "cannot read: permission denied",
      }]);
      assert.deepEqual(await names(graph, "search_function", "visible"), ["open.py:1"]);
      const miss = await graph.search("search_function", "hidden");
      assert.deepEqual(miss.unindexed.map((f) => [f.path, f.status]), [["secret.py", "failed"]]);
      locked = false;
      assert.deepEqual(await names(graph, "search_function", "hidden"), ["secret.py:1"]);
    },
    { fs },
  );
});

Deno.test("graph: a file Deno may not read (--deny-read) fails clearly in a real process", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  try {
    await writeTree(ws.path, {
      "secret.py": "def hidden(): pass\n",
      "open.py": "def visible(): pass\n",
    });
    const cli = new URL("../../../src/cli/ckg.ts", import.meta.url).href;
    const script = `${cache.path}/index.ts`;
    await Deno.writeTextFile(
      script,
      `import { ckgIndex } from ${JSON.stringify(cli)};\n` +
        `Deno.exit(await ckgIndex(undefined, { workspace: ${JSON.stringify(ws.path)} }));\n`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--deny-read=${ws.path}/secret.py`,
        `--config=${new URL("../../../deno.json", import.meta.url).pathname}`,
        script,
      ],
      env: { DEFT_CACHE_DIR: cache.path },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(stdout, /2 source files: 1 indexed, 0 skipped, 1 failed/);
    assert.match(
      stdout,
      /Failed:\n {2}secret\.py: cannot read: Deno permissions do not allow reading it/,
    );
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

for (const watch of [false, true]) {
  const mode = watch ? " (watched)" : "";
  Deno.test(`graph${mode}: in a git repository, .gitignore decides what is indexed`, async () => {
    await withGraph({
      ".gitignore": "ignored/\n*.gen.py\n",
      "src/tracked.py": "def tracked(): pass\n",
      "src/untracked.py": "def untracked(): pass\n",
      "src/made.gen.py": "def generated(): pass\n",
      "ignored/skip.py": "def ignored(): pass\n",
      "node_modules/dep/index.js": "function dep() {}\n",
      ".config/tool.py": "def hidden_but_not_ignored(): pass\n",
    }, async (graph, root) => {
      await git(root, "init", "-q");
      await git(root, "add", "src/tracked.py", ".gitignore");
      const report = await graph.refresh();
      assert.equal(report.mode, "git");
      const all = async (n: string) => (await names(graph, "search_function", n)).length;
      assert.equal(await all("tracked"), 1);
      assert.equal(await all("untracked"), 1);
      assert.equal(
        await all("hidden_but_not_ignored"),
        1,
        "git, not the hidden-folder rule, decides",
      );
      assert.equal(await all("dep"), 1, "node_modules is not ignored here, so git lists it");
      assert.equal(await all("generated"), 0);
      assert.equal(await all("ignored"), 0);
      await Deno.writeTextFile(
        `${root}/.gitignore`,
        "ignored/\n*.gen.py\nuntracked.py\nnode_modules/\n",
      );
      assert.equal(await all("untracked"), 0, "a .gitignore edit applies at the next search");
      assert.equal(await all("dep"), 0);
      await Deno.remove(`${root}/src/tracked.py`);
      assert.equal(await all("tracked"), 0, "deleted but still in the git index");
    }, { watch });
  });
}

Deno.test("graph: outside git, hidden folders, dependencies, build output and venvs are skipped", async () => {
  await withGraph({
    "app/main.py": "def main(): pass\n",
    ".hidden/h.py": "def hidden(): pass\n",
    "node_modules/x/i.js": "function dep() {}\n",
    "build/lib/b.py": "def built(): pass\n",
    "target/t.rs": "fn target_fn() {}\n",
    "__pycache__/c.py": "def cached(): pass\n",
    "env/pyvenv.cfg": "home = /usr/bin\n",
    "env/lib/site.py": "def in_venv(): pass\n",
    ".eslintrc.js": "function hiddenFile() {}\n",
  }, async (graph) => {
    const report = await graph.refresh();
    assert.equal(report.mode, "walk");
    assert.equal(report.seen, 1);
    assert.deepEqual(await names(graph, "search_function", "main"), ["app/main.py:1"]);
  });
});

Deno.test("graph: parser workers find exactly what in-process parsing finds", async () => {
  const files: Record<string, string> = {};
  for await (const entry of Deno.readDir(LANGS_DIR)) {
    files[entry.name] = await Deno.readTextFile(LANGS_DIR + entry.name);
  }
  const collect = async (workers: number, sliceBytes?: number) => {
    let lines: string[] = [];
    let parser = "";
    await withGraph(files, async (graph) => {
      const report = await graph.refresh();
      parser = report.parser;
      for (const command of ["search_function", "search_class", "search_class_method"] as const) {
        for (const name of ["area", "Shape", "Circle", "get", "main", "render", "inner", "New"]) {
          const result = await graph.search(command, name, undefined, { body: true });
          lines = lines.concat(
            result.matches.map((m) =>
              `${m.symbol.path} ${describeSymbol(m.symbol)} ${m.body?.length}`
            ),
          );
        }
      }
    }, { workers, workerThresholdBytes: 1, sliceBytes });
    return { lines, parser };
  };
  const inProcess = await collect(0);
  const pooled = await collect(2);
  // One file per slice: many runs overlap on the same workers while files are still being read.
  const overlapping = await collect(2, 1);
  assert.equal(inProcess.parser, "in-process");
  assert.equal(pooled.parser, "on 2 parser workers");
  assert.ok(inProcess.lines.length > 30);
  assert.deepEqual(pooled.lines, inProcess.lines);
  assert.deepEqual(overlapping.lines, inProcess.lines);
  assert.deepEqual((await collect(0, 1)).lines, inProcess.lines);
});

Deno.test("graph: when workers cannot start, parsing falls back to this thread and says so", async () => {
  const RealWorker = globalThis.Worker;
  globalThis.Worker = class {
    constructor() {
      throw new Error("workers are disabled here");
    }
  } as unknown as typeof Worker;
  try {
    await withGraph({ "a.py": "def a(): pass\n", "b.py": "def b(): pass\n" }, async (graph) => {
      const report = await graph.refresh();
      assert.equal(
        report.parser,
        "in-process: parser workers could not start (workers are disabled here)",
      );
      assert.equal(report.parsed, 2);
    }, { workers: 2, workerThresholdBytes: 1 });
  } finally {
    globalThis.Worker = RealWorker;
  }
});

Deno.test("graph: readers in other connections keep reading while a refresh writes", async () => {
  await withGraph({ "a.py": "def first(): pass\n" }, async (graph, root) => {
    await graph.refresh();
    const reader = new DatabaseSync(graph.databasePath, { readOnly: true });
    try {
      reader.exec("BEGIN");
      const count = () =>
        (reader.prepare("SELECT count(*) AS n FROM symbols").get() as { n: number }).n;
      assert.equal(count(), 1);
      await Deno.writeTextFile(`${root}/b.py`, "def second(): pass\n");
      await graph.refresh();
      assert.equal(count(), 1, "the open read transaction keeps its snapshot");
      reader.exec("COMMIT");
      assert.equal(count(), 2);
    } finally {
      reader.close();
    }
  });
});

Deno.test("graph: two processes share one database without redoing each other's work", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  const a = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  const b = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    await writeTree(ws.path, { "x.py": "def x(): pass\n" });
    await Deno.utime(`${ws.path}/x.py`, PAST, PAST);
    assert.equal((await a.refresh()).parsed, 1);
    assert.equal((await b.refresh()).parsed, 0, "b sees what a stored");
    await writeTree(ws.path, { "y.py": "def y(): pass\n" });
    await Deno.utime(`${ws.path}/y.py`, PAST, PAST);
    assert.equal((await a.refresh()).parsed, 1);
    const report = await b.refresh();
    assert.deepEqual([report.parsed, report.unchanged], [0, 2], "b's cached rows were dropped");
    assert.equal((await b.search("search_function", "y")).matches.length, 1);
  } finally {
    a.close();
    b.close();
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("graph: a database from another schema version, or not a database, is rebuilt", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  try {
    await writeTree(ws.path, { "a.py": "def a(): pass\n" });
    let graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
    const path = graph.databasePath;
    await graph.refresh();
    graph.close();
    const db = new DatabaseSync(path);
    db.exec("UPDATE meta SET value = '0' WHERE key = 'schema_version'");
    db.close();
    graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
    assert.equal(graph.totals().files, 0, "old data dropped");
    assert.equal((await graph.search("search_function", "a")).matches.length, 1);
    graph.close();
    await Deno.writeTextFile(path, "this is not a database ".repeat(100));
    for (const suffix of ["-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
    graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
    assert.equal(graph.databaseNote, undefined);
    assert.equal((await graph.search("search_function", "a")).matches.length, 1);
    graph.close();
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("graph: a cache folder that cannot be created leaves the graph in memory, working", async () => {
  const ws = await tempDir();
  try {
    await writeTree(ws.path, { "a.py": "def a(): pass\n", "blocker": "a file, not a folder" });
    const graph = CodeGraph.open(ws.path, { ckgDir: `${ws.path}/blocker/ckg`, workers: 0 });
    try {
      assert.equal(graph.databasePath, ":memory:");
      assert.match(graph.databaseNote ?? "", /kept in memory/);
      assert.equal((await graph.search("search_function", "a")).matches.length, 1);
    } finally {
      graph.close();
    }
  } finally {
    await ws.remove();
  }
});
