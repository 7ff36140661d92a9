/** `deft ckg index` and `deft ckg search-*`: what they print and the exit codes they return. */
import assert from "node:assert/strict";
import { ckgIndex, ckgSearch } from "../../src/cli/ckg.ts";
import { tempDir, writeTree } from "./helpers.ts";

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
