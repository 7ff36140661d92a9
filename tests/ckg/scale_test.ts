/**
 * The code graph on big trees (issue 51, Deliver 3): memory held while indexing is bounded by a
 * constant, not by how many files have syntax errors; a first answer for a C function parses the
 * files that may define it, not every file that calls it.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { refreshScope, type SourceFs } from "../../src/ckg/indexer.ts";
import { definitionNeedle } from "../../src/ckg/prefilter.ts";
import { GraphStore } from "../../src/ckg/store.ts";
import type { Parsing } from "../../src/ckg/worker_pool.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

const encode = (s: string) => new TextEncoder().encode(s);

Deno.test("ckg: indexing many C files with syntax errors holds a bounded amount of source, not the tree", async () => {
  await using ws = await tempDir();
  const FILES = 160;
  const SIZE = 64 * 1024;
  const WAITING = 1024 * 1024;
  // The listing is real (empty files); their content comes from the fake file system below.
  await writeTree(
    ws.path,
    Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`src/f${i}.c`, ""])),
  );
  // A C file whose braces a preprocessor conditional splits: recovered by a second parse.
  const unit = "int f(void) {\n#ifdef X\n  if (a) {\n#else\n  if (b) {\n#endif\n  }\n}\n";
  const body = unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const past = new Date(Date.now() - 3_600_000);
  let read = 0;
  let stored = 0;
  let mostHeld = 0;
  const info = { isFile: true, isSymlink: false, isDirectory: false, size: SIZE, mtime: past };
  const fs: SourceFs = {
    lstat: () => info as Deno.FileInfo,
    stat: () => info as Deno.FileInfo,
    realPath: (path) => path,
    readFile: (path) => {
      read += SIZE;
      mostHeld = Math.max(mostHeld, read - stored);
      // Each file different, so none is a copy of another.
      return Promise.resolve(encode(`/* ${path} */\n` + body.slice(path.length + 7)));
    },
  };
  // A parser that finds no definitions and reports a syntax error: every file goes to recovery.
  const parsing: Parsing = {
    description: "test parser",
    run: async (jobs, onResult) => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      for (const job of jobs) {
        onResult(job.id, {
          ok: true,
          result: { names: [], data: new Int32Array(0), hasError: true },
        });
      }
    },
    close: () => {},
  };
  const store = GraphStore.open(":memory:", ws.path);
  const putFile = store.putFile.bind(store);
  store.putFile = (record, symbols, refs) => {
    stored += record.size;
    putFile(record, symbols, refs);
  };
  try {
    const report = await refreshScope(store, ws.path, "", {
      fs,
      parsing,
      workers: 0,
      waitingBytes: WAITING,
      sliceBytes: SIZE,
    });
    assert.equal(report.parsed, FILES);
    assert.equal(stored, FILES * SIZE);
    const total = FILES * SIZE;
    assert.ok(
      mostHeld <= 2 * WAITING,
      `${(mostHeld / 2 ** 20).toFixed(1)} MiB of ${(total / 2 ** 20).toFixed(1)} MiB read was ` +
        "held unstored at once: files with syntax errors waited for the end of the tree",
    );
  } finally {
    store.close();
  }
});

Deno.test("ckg: a C function search's byte filter keeps definitions and turns calls away", () => {
  const needle = definitionNeedle("target", "search_function");
  const defines = [
    "int target(void)\n{\n  return 0;\n}\n",
    "static int\ntarget(a, b)\nint a;\nint b;\n{\n}\n",
    "void (*target(int sig, void (*f)(int)))(int) {\n}\n",
    "BPF_CALL_0(target)\n{\n}\n",
    "int target(void) __releases(x) /* held */\n{\n}\n",
    "int target(char c /* ) */, const char *s)\n#ifdef X\n{\n#else\n{\n#endif\n}\n",
    "int (target)(int x) { return x; }\n",
    "#define DEF \\\n  int target(void) \\\n  { return 1; }\n",
    "int target(int a) : base(a) {}\n",
    "auto target() -> int { return 1; }\n",
    "int target(",
  ];
  for (const text of defines) {
    assert.equal(needle.test(encode(text), "a.c"), true, text);
    assert.equal(needle.test(encode(text), "a.h"), true, text);
  }
  const calls = [
    "void g(void) {\n  target();\n}\n",
    "void g(void) {\n  x = target(1) + 2;\n}\n",
    "void g(void) {\n  if (target(x)) {\n  }\n}\n",
    "int g(void) { return target(a, b); }\n",
    'void g(void) { h(target("("), 1); }\n',
    "int target;\n",
    "void g(void) { p = &target; }\n",
  ];
  for (const text of calls) assert.equal(needle.test(encode(text), "a.c"), false, text);
  // Other languages and other searches keep the plain word filter.
  assert.equal(needle.test(encode(calls[0]), "a.cc"), true);
  assert.equal(definitionNeedle("target", "search_class").test(encode(calls[0]), "a.c"), true);
  assert.equal(definitionNeedle("target").test(encode(calls[0]), "a.c"), true);
});

Deno.test("ckg: the first answer for a C function parses the file that defines it, not its 60 callers", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  const files: Record<string, string> = {
    "core/sched.c": "void schedule_it(void)\n{\n  work();\n}\n",
  };
  for (let i = 0; i < 60; i++) {
    files[`drivers/d${i}.c`] = `static int d${i}_wait(void)\n{\n  schedule_it();\n  ` +
      `return ${i};\n}\n` + "/* padding */\n".repeat(600);
  }
  await writeTree(ws.path, files);
  const past = new Date(Date.now() - 3_600_000);
  for (const path of Object.keys(files)) await Deno.utime(`${ws.path}/${path}`, past, past);
  // Answer first even on a tree this small (by default it parses a tree under 512 KB whole).
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0, prefilterMinBytes: 0 });
  try {
    const found = await graph.search("search_function", "schedule_it", undefined, { body: false });
    assert.deepEqual(found.matches.map((m) => m.symbol.path), ["core/sched.c"]);
    assert.equal(
      graph.totals().files,
      1,
      "the first answer parsed the files that only call the function",
    );
    // The callers are there for the searches that need them.
    const callers = await graph.searchEdges("search_callers", "schedule_it", undefined, {
      body: false,
    });
    assert.equal(callers.callers.length, 60);
  } finally {
    graph.close();
  }
});

Deno.test("ckg: a search in a fresh process reuses the folder listings the database holds, and still sees a new file", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  const files: Record<string, string> = {};
  for (const dir of ["a", "a/b", "a/b/c", "d", "d/e"]) {
    for (let i = 0; i < 3; i++) {
      files[`${dir}/f${i}.c`] = `int ${dir.replaceAll("/", "_")}_${i}(void) { return ${i}; }\n`;
    }
  }
  await writeTree(ws.path, files);
  // Settled mtimes: a folder changed within the last moment is read again whatever it holds.
  const past = new Date(Date.now() - 3_600_000);
  for (const dir of ["a", "a/b", "a/b/c", "d", "d/e", ""]) {
    await Deno.utime(`${ws.path}/${dir}`, past, past);
  }
  const first = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  await first.refresh();
  first.close();

  const readDirSync = Deno.readDirSync;
  const read: string[] = [];
  Deno.readDirSync = (path: string | URL) => {
    read.push(String(path));
    return readDirSync(path);
  };
  try {
    // A new graph, as a new `deft ckg search-function` process opens it.
    const second = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
    try {
      const found = await second.search("search_function", "a_b_c_2", undefined, { body: false });
      assert.equal(found.matches.length, 1);
      assert.deepEqual(read, [], "an unchanged tree's folders were listed again");
    } finally {
      second.close();
    }
    // A file added since: its folder's mtime moved, so that folder (only) is read again.
    await Deno.writeTextFile(`${ws.path}/a/b/added.c`, "int added_here(void) { return 0; }\n");
    const third = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
    try {
      const found = await third.search("search_function", "added_here", undefined, { body: false });
      assert.equal(found.matches.length, 1, "the new file was not seen");
      assert.deepEqual(read, [`${ws.path}/a/b`]);
    } finally {
      third.close();
    }
  } finally {
    Deno.readDirSync = readDirSync;
  }
});

Deno.test("ckg: a C function search's prefilter stays linear on a file of many `f(x) /*` with one `*/` at its end", () => {
  // Every match of the name meets a comment; scanning the file from there for its end at each
  // match took seconds on this quarter megabyte, against milliseconds for a plain file.
  const SIZE = 256 * 1024;
  const timed = (unit: string) => {
    const bytes = encode(unit.repeat(Math.ceil(SIZE / unit.length)) + "*/");
    const needle = definitionNeedle("f", "search_function");
    const start = performance.now();
    const kept = needle.test(bytes, "src/hostile.c");
    return { kept, ms: performance.now() - start };
  };
  timed("g = f;\n");
  const plain = timed("g = f;\n");
  const hostile = timed("f(x) /*");
  assert.equal(plain.kept, false, "a file that only uses f is turned away");
  assert.equal(hostile.kept, true, "a file the scan cannot rule out is kept");
  assert.ok(
    hostile.ms <= 5 * plain.ms + 500,
    `the hostile file took ${hostile.ms.toFixed(0)} ms, a plain one ${plain.ms.toFixed(0)} ms`,
  );
});
