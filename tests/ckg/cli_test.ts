/** `deft ckg index` and `deft ckg search-*`: what they print and the exit codes they return. */
import assert from "node:assert/strict";
import { ckgEdgeSearch, ckgFastPath, ckgIndex, ckgSearch } from "../../src/cli/ckg.ts";
import { OUTPUT_LIMIT } from "../../src/ckg/format.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

/** Runs `fn` with stdout and stderr captured and DEFT_CACHE_DIR pointing at a temp folder. */
async function captured(
  cache: string,
  fn: () => Promise<number>,
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  const before = Deno.env.get("DEFT_CACHE_DIR");
  console.log = (...args: unknown[]) => out.push(args.join(" "));
  console.error = (...args: unknown[]) => err.push(args.join(" "));
  Deno.env.set("DEFT_CACHE_DIR", cache);
  try {
    const code = await fn();
    return { code, out: out.join("\n"), err: err.join("\n") };
  } finally {
    console.log = log;
    console.error = error;
    if (before === undefined) Deno.env.delete("DEFT_CACHE_DIR");
    else Deno.env.set("DEFT_CACHE_DIR", before);
  }
}

Deno.test("cli: ckg index prints a summary of files, symbols and problems", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  try {
    await writeTree(ws.path, {
      "src/a.py": "class A:\n    x = 1\n    def m(self):\n        def inner(): pass\n",
      "src/b.go": "package b\n\nfunc F() {}\n",
      "src/broken.py": "def ok(): pass\ndef broken(:\n",
      "web/app.min.js": "var a=1;".repeat(10_000),
    });
    const first = await captured(cache.path, () => ckgIndex(undefined, { workspace: ws.path }));
    assert.equal(first.code, 0, first.err);
    const lines = first.out.split("\n");
    assert.match(
      lines[0],
      new RegExp(
        `^Indexed ${ws.path} in \\d+\\.\\d\\d s \\(files listed by walking the folder; parsed in-process\\)\\.$`,
      ),
    );
    assert.equal(
      lines[1],
      "Files: 4 source files: 3 indexed, 1 skipped, 0 failed " +
        "(this run: 3 parsed, 0 unchanged, 0 removed).",
    );
    assert.equal(lines[2], "Symbols: 7 (4 functions, 1 class, 1 method, 1 field).");
    assert.equal(lines[3], "Skipped (cannot yield definitions):");
    assert.match(
      lines[4],
      /^ {2}web\/app\.min\.js: minified or generated \(lines average 80000 characters\)$/,
    );
    assert.equal(lines[5], "1 file has syntax errors (indexed as far as it parses).");
    assert.match(lines[6], new RegExp(`^Database: ${cache.path}/ckg/.+\\.db$`));

    const second = await captured(
      cache.path,
      () => ckgIndex(`${ws.path}/src`, { workspace: ws.path }),
    );
    assert.equal(second.code, 0);
    assert.match(second.out, /\(this run: 0 parsed, 3 unchanged, 0 removed\)/);
    assert.match(second.out, /^Indexed \S+\/src in /);
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("cli: ckg index refuses folders outside the workspace", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  try {
    const outside = await captured(cache.path, () => ckgIndex("/usr", { workspace: ws.path }));
    assert.equal(outside.code, 1);
    assert.equal(outside.out, "");
    assert.match(
      outside.err,
      /^deft ckg index: The path \/usr (?:is outside|leaves) the workspace/,
    );
    const missing = await captured(
      cache.path,
      () => ckgIndex(`${ws.path}/nope`, { workspace: ws.path }),
    );
    assert.equal(missing.code, 1);
    assert.match(missing.err, /nope does not exist\.$/);
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("cli: ckg search prints Trae's text or JSON and exits 0 only when found", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  try {
    await writeTree(ws.path, {
      "lib/shapes.py": "class Shape:\n    def area(self):\n        return 0\n",
      "other/x.py": "def area(): pass\n",
    });
    const opts = { workspace: ws.path, body: true, json: false };
    let r = await captured(cache.path, () => ckgSearch("class-method", "area", opts));
    assert.equal(r.code, 0);
    assert.equal(
      r.out,
      `Found 1 class methods named area:\n1. ${ws.path}/lib/shapes.py:2-3 within class Shape\n` +
        "def area(self):\n        return 0",
    );
    r = await captured(
      cache.path,
      () => ckgSearch("function", "area", { ...opts, body: false, path: `${ws.path}/lib` }),
    );
    assert.equal(r.code, 1);
    assert.equal(
      r.out,
      "No functions named area found.\nClose names: area (class method, use search_class_method).",
    );
    r = await captured(cache.path, () => ckgSearch("class", "Shape", { ...opts, json: true }));
    assert.equal(r.code, 0);
    const json = JSON.parse(r.out);
    assert.equal(json.found, 1);
    assert.deepEqual(
      {
        name: json.matches[0].name,
        path: json.matches[0].path,
        start: json.matches[0].start_line,
        end: json.matches[0].end_line,
        methods: json.matches[0].methods,
        body: json.matches[0].body,
      },
      {
        name: "Shape",
        path: "lib/shapes.py",
        start: 1,
        end: 3,
        methods: ["def area(self)"],
        body: "class Shape:\n    def area(self):\n        return 0",
      },
    );
    r = await captured(cache.path, () => ckgSearch("function", " ", opts));
    assert.equal(r.code, 1);
    assert.match(r.err, /the name to search for is empty/);
  } finally {
    await ws.remove();
    await cache.remove();
  }
});

// 300 callers of `target`: caller i spans lines 4 + 4i to 6 + 4i and calls on its last line.
const CALLERS = "def target():\n    pass\n\n" +
  Array.from(
    { length: 300 },
    (_, i) => `def caller${i}():\n    # ${"x".repeat(60)}\n    return target()\n`,
  ).join("\n");

Deno.test("cli: --offset and --limit page an answer, and a cut one names the flag that brings the rest", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  await writeTree(ws.path, { "calls.py": CALLERS });
  const opts = { workspace: ws.path, body: false, json: false };
  let r = await captured(
    cache.path,
    () => ckgEdgeSearch("search-callers", "target", { ...opts, offset: 10, limit: 2 }),
  );
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    "Found 300 functions calling target:\n" +
      `11. ${ws.path}/calls.py:44-46 function caller10 (calls at line 46)\n` +
      `12. ${ws.path}/calls.py:48-50 function caller11 (calls at line 50)\n` +
      "<entries 11-12 of 300 shown; run again with --offset 12 for the next ones (--no-body " +
      "shortens each entry; a narrower --path shortens the list)>",
  );
  // With bodies the answer is cut at the output limit; the flag it names brings the next entry.
  r = await captured(
    cache.path,
    () => ckgEdgeSearch("search-callers", "target", { ...opts, body: true }),
  );
  const m = / (\d+) more entries not shown; to see them run again with --offset (\d+) \(--no-body/
    .exec(r.out.slice(OUTPUT_LIMIT));
  assert.ok(m, r.out.slice(OUTPUT_LIMIT));
  const next = Number(m[2]);
  assert.equal(Number(m[1]), 300 - next - 1);
  r = await captured(
    cache.path,
    () => ckgEdgeSearch("search-callers", "target", { ...opts, body: true, offset: next }),
  );
  assert.ok(
    r.out.startsWith(
      `Found 300 functions calling target:\n${next + 1}. ${ws.path}/calls.py:${4 + 4 * next}-`,
    ),
    r.out.slice(0, 120),
  );
  assert.match(r.out, new RegExp(`\\(calls at line \\d+\\)\\ndef caller${next}\\(\\):`));
  // Past the end: said so, and exit 1, so a loop over pages stops.
  r = await captured(cache.path, () => ckgSearch("function", "target", { ...opts, offset: 1 }));
  assert.equal(r.code, 1);
  assert.equal(
    r.out,
    "Found 1 functions named target:\nNo entries from --offset 1: there are 1 (offset counts from 0).",
  );
  // JSON lists the page's entries; `found` still counts them all, `next_offset` says what follows.
  r = await captured(
    cache.path,
    () =>
      ckgEdgeSearch("search-references", "target", { ...opts, json: true, offset: 297, limit: 2 }),
  );
  assert.equal(r.code, 0);
  const json = JSON.parse(r.out);
  assert.deepEqual(
    [json.found, json.offset, json.next_offset, json.matches.map((x: { line: number }) => x.line)],
    [300, 297, 299, [1194, 1198]],
  );
  r = await captured(
    cache.path,
    () => ckgEdgeSearch("search-references", "target", { ...opts, json: true, offset: 299 }),
  );
  const last = JSON.parse(r.out);
  assert.deepEqual([last.offset, "next_offset" in last, last.matches.length], [299, false, 1]);
});

Deno.test("cli: the fast path answers plain search lines as commander would, and leaves the rest to it", async () => {
  await using ws = await tempDir();
  await using cache = await tempDir();
  await writeTree(ws.path, {
    "m.py": "class Base:\n    pass\n\nclass Mid(Base):\n    pass\n\nclass Leaf(Mid):\n    pass\n" +
      "\ndef t():\n    pass\n\ndef a():\n    t()\n\ndef b():\n    t()\n",
  });
  const run = (args: string[]) => captured(cache.path, async () => await ckgFastPath(args) ?? -1);
  let r = await run([
    "search-callers",
    "t",
    "-w",
    ws.path,
    "--no-body",
    "--offset=1",
    "--limit",
    "1",
  ]);
  assert.equal(r.code, 0, r.err);
  assert.equal(
    r.out,
    `Found 2 functions calling t:\n2. ${ws.path}/m.py:16-17 function b (calls at line 17)`,
  );
  r = await run(["search-subclasses", "Base", "--working-dir", ws.path, "--indirect", "--json"]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(
    JSON.parse(r.out).matches.map((m: { name: string; depth: number }) => `${m.name}@${m.depth}`),
    ["Mid@1", "Leaf@2"],
  );
  r = await run(["search-function", "t", "-w", ws.path, "--path", `${ws.path}/.`]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, `Found 1 functions named t:\n1. ${ws.path}/m.py:10-11\ndef t():\n    pass`);
  r = await run(["search-function", "nothing_here", "-w", ws.path]);
  assert.equal(r.code, 1);
  // Everything else is commander's: help, unknown flags, flags of other commands, bad numbers,
  // a missing or extra name, other commands.
  for (
    const args of [
      ["search-function", "t", "--help"],
      ["search-function", "t", "-h"],
      ["search-function", "t", "--indirect"],
      ["search-function", "t", "--bogus"],
      ["search-function", "t", "--offset", "-1"],
      ["search-function", "t", "--offset", "1.5"],
      ["search-function", "t", "--limit", "0"],
      ["search-function", "t", "--limit"],
      ["search-function"],
      ["search-function", "t", "u"],
      ["index"],
      ["search-everything", "t"],
      [],
    ]
  ) {
    r = await run([...args, "-w", ws.path]);
    assert.equal(r.code, -1, `${args.join(" ")}: ${r.out} ${r.err}`);
    assert.equal(r.out, "");
  }
});
