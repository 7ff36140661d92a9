/**
 * The wrong edges of issue 32, each on the repro that showed it, with the answer written here by
 * hand: Rust impls joined to the definitions their file can see, C statement macros before
 * `switch`, JavaScript anonymous functions as callers, calls inside Rust macro arguments, TS/JS
 * re-exports as references, and C recovery one definition at a time.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import type { EdgeResult } from "../../src/ckg/edge_search.ts";
import { formatEdgeText } from "../../src/ckg/edge_format.ts";
import { definitionCuts } from "../../src/ckg/preproc.ts";
import { describeSymbol, symbolsOf, tempDir, writeTree } from "../helpers/ckg.ts";

async function withGraph(
  files: Record<string, string>,
  fn: (graph: CodeGraph, root: string) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(dir.path, files);
  const graph = CodeGraph.open(dir.path, { ckgDir: cache.path, workers: 0 });
  try {
    await fn(graph, dir.path);
  } finally {
    graph.close();
  }
}

const opts = { body: false };

function callers(r: EdgeResult): string[] {
  return r.callers.map((m) =>
    `${m.symbol.path}:${m.symbol.startLine}-${m.symbol.endLine} ${m.symbol.name}@${
      m.lines.join(",")
    }`
  );
}

function references(r: EdgeResult): string[] {
  return r.references.map((m) =>
    `${m.ref.path}:${m.ref.line} ${m.ref.kind}${m.enclosing ? ` in ${m.enclosing.name}` : ""}`
  );
}

Deno.test("repro 1: a Rust impl's type is reported at its own definition, ambiguous when unclear", async () => {
  await withGraph({
    "src/lib.rs": "pub trait Shape {}\n",
    "src/a.rs": "\n\n\npub struct Circle {\n    r: f64,\n}\n",
    "src/b.rs": "pub struct Circle;\n",
    "src/c.rs": "use crate::Shape;\n\nimpl Shape for Circle {}\n",
  }, async (graph, root) => {
    const result = await graph.searchEdges("search_subclasses", "Shape", undefined, opts);
    // c.rs names neither definition and both sit in its folder: both, each at its own file.
    assert.equal(
      formatEdgeText(result, false),
      `Found 2 classes deriving from Shape:
1. ${root}/src/a.rs:4-6 struct Circle (impl at src/c.rs:3; ambiguous: 2 definitions are named Circle and the impl's file names none of them)
2. ${root}/src/b.rs:1-1 struct Circle (impl at src/c.rs:3; ambiguous: 2 definitions are named Circle and the impl's file names none of them)
`,
    );
  });
  // A `use` naming the module, or a definition in the impl's own file, settles it.
  await withGraph({
    "src/lib.rs": "pub trait Shape {}\n",
    "src/a.rs": "\n\n\npub struct Circle {\n    r: f64,\n}\n",
    "src/b.rs": "pub struct Circle;\n",
    "src/c.rs": "use crate::Shape;\nuse crate::b::Circle;\n\nimpl Shape for Circle {}\n",
    "src/d.rs": "use crate::Shape;\npub struct Square;\nimpl Shape for Square {}\n",
    "other/e.rs": "pub struct Square;\n",
  }, async (graph, root) => {
    const result = await graph.searchEdges("search_subclasses", "Shape", undefined, opts);
    assert.equal(
      formatEdgeText(result, false),
      `Found 2 classes deriving from Shape:
1. ${root}/src/b.rs:1-1 struct Circle (impl at src/c.rs:4)
2. ${root}/src/d.rs:2-2 struct Square (impl at src/d.rs:3)
`,
    );
  });
});

Deno.test("repro 2: a C statement macro before switch does not make a function named switch", async () => {
  const source =
    "#define QUIET\nvoid g(void) {}\n\nvoid f(int k) {\n  QUIET\n  switch (k) {\n  case 1:\n    g();\n    break;\n  }\n}\n";
  await withGraph({ "q.c": source }, async (graph) => {
    const miss = await graph.search("search_function", "switch", undefined, opts);
    assert.deepEqual(miss.matches, []);
    const f = await graph.search("search_function", "f", undefined, opts);
    assert.deepEqual(f.matches.map((m) => `${m.symbol.startLine}-${m.symbol.endLine}`), ["4-11"]);
    assert.deepEqual(
      callers(await graph.searchEdges("search_callers", "g", undefined, opts)),
      ["q.c:4-11 f@8"],
    );
  });
});

Deno.test("repro 3: calls from JavaScript anonymous functions have a caller", async () => {
  const source = "function helper(x) { return x; }\n" +
    "module.exports = function (x) { return helper(x); };\n" +
    "[1].forEach(function (y) { helper(y); });\n" +
    "helper(0);\n" +
    "function named() { [2].map((z) => helper(z)); }\n";
  await withGraph({ "m.js": source }, async (graph, root) => {
    const result = await graph.searchEdges("search_callers", "helper", undefined, opts);
    // The top-level call on line 4 has no caller; the arrow inside `named` is `named`'s.
    assert.deepEqual(callers(result), [
      "m.js:2-2 <anonymous>@2",
      "m.js:3-3 <anonymous>@3",
      "m.js:5-5 named@5",
    ]);
    assert.equal(
      formatEdgeText(result, false),
      `Found 3 functions calling helper:
1. ${root}/m.js:2-2 function <anonymous> (calls at line 2)
2. ${root}/m.js:3-3 function <anonymous> (calls at line 3)
3. ${root}/m.js:5-5 function named (calls at line 5)
`,
    );
    const bodies = await graph.searchEdges("search_callers", "helper", undefined, { body: true });
    assert.equal(bodies.callers[1].body, "function (y) { helper(y); }");
  });
});

Deno.test("repro 4: calls inside Rust macro arguments are calls", async () => {
  const source = "fn helper()->u32{1}  fn direct()->u32{helper()}  " +
    'fn in_macro(){ assert_eq!(helper(),1); println!("{}",helper()); }\n' +
    "fn not_calls() { let v = vec![helper [0]]; }\n";
  await withGraph({ "m.rs": source }, async (graph) => {
    assert.deepEqual(
      callers(await graph.searchEdges("search_callers", "helper", undefined, opts)),
      ["m.rs:1-1 direct@1", "m.rs:1-1 in_macro@1"],
    );
    const refs = await graph.searchEdges("search_references", "helper", undefined, opts);
    assert.deepEqual(references(refs), [
      "m.rs:1 call in direct",
      "m.rs:1 call in in_macro",
      "m.rs:1 call in in_macro",
    ]);
  });
});

Deno.test("repro 5: TS/JS re-exports are references", async () => {
  await withGraph({
    "a.ts": "export function f() {}\n",
    "b.ts": "export { f } from './a';\n",
    "c.ts": "import { f } from './b';\nf();\n",
    "d.js": "const g = require('./a').f;\nexport { g as f2, g };\n",
  }, async (graph) => {
    assert.deepEqual(
      references(await graph.searchEdges("search_references", "f", undefined, opts)),
      ["b.ts:1 import", "c.ts:1 import", "c.ts:2 call", "d.js:1 attr"],
    );
    assert.deepEqual(
      references(await graph.searchEdges("search_references", "g", undefined, opts)),
      ["d.js:2 import", "d.js:2 import"],
    );
  });
});

const AFTER = `
static int after_one(int x) {
  return x + 1;
}

void after_two(void) {
  after_one(2);
}
`;

Deno.test("repro 6: a bad C region costs only the definition it is in", async () => {
  // (a) an initializer holding #define/#undef and an X-macro row, (b) a multi-line #define with a
  // comment in its body, (c) an unbalanced brace inside a function.
  const initializer = `static const struct cfunction function_list[] = {
#define BINOP(name) CFUNC(f_ ## name, "_" #name, 3),
BINOPS
#undef BINOP
  CFUNC(f_dump, "tojson", 1),
};
` + AFTER;
  const define = `#define CHECK(x) \\
  if (!(x)) { /* fail here,
                 loudly */ \\
    abort(); \\
  }
` + AFTER;
  const unbalanced = `int broken(void) {
  switch (x) {
  case 1: { break;
  }
}
` + AFTER;
  await withGraph({ "a.c": initializer, "b.c": define, "c.c": unbalanced }, async (graph) => {
    const found = await graph.search("search_function", "after_one", undefined, opts);
    assert.deepEqual(
      found.matches.map((m) =>
        `${m.symbol.path}:${m.symbol.startLine}-${m.symbol.endLine}${
          m.symbol.parentFunction ? ` in ${m.symbol.parentFunction}` : ""
        }`
      ),
      ["a.c:8-10", "b.c:7-9", "c.c:7-9"],
    );
    assert.deepEqual(
      callers(await graph.searchEdges("search_callers", "after_one", undefined, opts)),
      ["a.c:12-14 after_two@13", "b.c:11-13 after_two@12", "c.c:11-13 after_two@12"],
    );
  });
  // The cuts fall where top-level definitions start, never inside a directive or a comment.
  assert.deepEqual(
    definitionCuts(unbalanced).map((at) => unbalanced.slice(at).split("\n")[0]),
    ["int broken(void) {", "static int after_one(int x) {", "void after_two(void) {"],
  );
  assert.deepEqual(
    definitionCuts(define).map((at) => define.slice(at).split("\n")[0]),
    ["#define CHECK(x) \\", "static int after_one(int x) {", "void after_two(void) {"],
  );
  // Without the recovery the unbalanced brace nests the later functions in `broken`.
  const symbols = await symbolsOf("c.c", unbalanced);
  assert.ok(
    symbols.map((s) => describeSymbol(s)).includes("function after_one in broken 7-9"),
    "the whole-file parse nests them (the case the recovery is for)",
  );
});

/** `path:line kind [in name]`; an anonymous function as `[Class.]<anonymous> start-end`. */
function referencesWithLines(r: EdgeResult): string[] {
  return r.references.map(({ ref, enclosing: e }) => {
    const name = e?.name === "<anonymous>"
      ? `${e.className ? `${e.className}.` : ""}<anonymous> ${e.startLine}-${e.endLine}`
      : e?.name;
    return `${ref.path}:${ref.line} ${ref.kind}${name ? ` in ${name}` : ""}`;
  });
}

Deno.test("anonymous functions in references: the one around the use, by its own lines, as in callers", async () => {
  await withGraph({
    "m.js": "function helper(x) { return x; }\n" +
      "setTimeout(function () {\n  helper(1);\n}, 0);\n" +
      "function named() {\n  return [1].map((z) => {\n    return helper(z);\n  });\n}\n" +
      "helper(0);\n",
    "m.ts":
      "import { helper } from './h';\nexport default (x: number) => {\n  return util.helper;\n};\n",
    "m.py": "def helper(x):\n    return x\n\nregistry = [\n    lambda y: helper(\n        y),\n]\n",
    "App.java": "class App {\n  static int helper(int x) { return x; }\n  Runnable r = () -> {\n" +
      "    helper(1);\n  };\n  void go() {\n    Runnable q = () -> {\n      helper(2);\n    };\n  }\n}\n",
    "m.cpp":
      "int helper(int x) { return x; }\nauto global = [](int y) {\n  return helper(y);\n};\n",
    "m.go":
      "package m\n\nfunc helper(x int) int { return x }\n\nvar table = []func(){\n\tfunc() {\n" +
      "\t\thelper(1)\n\t},\n}\n",
    "m.rs":
      "fn helper(x: u32) -> u32 { x }\nstatic HOOK: fn(u32) -> u32 = |z| {\n    helper(z)\n};\n",
  }, async (graph, root) => {
    const refs = await graph.searchEdges("search_references", "helper", undefined, opts);
    assert.deepEqual(referencesWithLines(refs), [
      // Inside a named function the named one; at the top level, no function at all.
      "App.java:4 call in App.<anonymous> 3-5",
      "App.java:8 call in go",
      "m.cpp:3 call in <anonymous> 2-4",
      "m.go:7 call in <anonymous> 6-8",
      "m.js:3 call in <anonymous> 2-4",
      "m.js:7 call in named",
      "m.js:10 call",
      "m.py:5 call in <anonymous> 5-6",
      "m.rs:3 call in <anonymous> 2-4",
      "m.ts:1 import",
      "m.ts:3 attr in <anonymous> 2-4",
    ]);
    // Callers name the same functions.
    assert.deepEqual(
      callers(await graph.searchEdges("search_callers", "helper", undefined, opts)),
      [
        "App.java:3-5 <anonymous>@4",
        "App.java:6-10 go@8",
        "m.cpp:2-4 <anonymous>@3",
        "m.go:6-8 <anonymous>@7",
        "m.js:2-4 <anonymous>@3",
        "m.js:5-9 named@7",
        "m.py:5-6 <anonymous>@5",
        "m.rs:2-4 <anonymous>@3",
      ],
    );
    const js = await graph.searchEdges("search_references", "helper", `${root}`, opts);
    const text = formatEdgeText(js, false);
    assert.match(
      text,
      new RegExp(
        `\\n\\d+\\. ${root}/App\\.java:4 call within method <anonymous> \\(lines 3-5\\) of class App\\n {3}helper\\(1\\);\\n`,
      ),
    );
    assert.match(
      text,
      new RegExp(
        `\\n\\d+\\. ${root}/m\\.js:3 call within function <anonymous> \\(lines 2-4\\)\\n {3}helper\\(1\\);\\n`,
      ),
    );
    assert.match(text, new RegExp(`\\n\\d+\\. ${root}/m\\.js:10 call\\n {3}helper\\(0\\);\\n`));
  });
});

// Namesakes: `Circle`, `Square` and `Tri` are each defined in two modules of the crate, and
// each impl's file says which one it means only through `super::`, a glob, or `self::`.
const MODULES = {
  "src/lib.rs": "pub mod shapes;\npub mod other;\npub trait Shape {}\n",
  "src/shapes.rs": "pub mod round;\npub mod square;\npub mod tri;\n\n" +
    "pub struct Circle;\npub struct Square;\npub struct Tri;\n",
  "src/other.rs":
    "pub struct Circle;\n\n\npub struct Square {\n    side: f64,\n}\npub struct Tri;\n",
  // super:: is crate::shapes, so src/shapes.rs.
  "src/shapes/round.rs": "use super::Circle;\nuse crate::Shape;\n\nimpl Shape for Circle {}\n",
  // A glob from crate::other: src/other.rs's Square, not the one in the parent module.
  "src/shapes/square.rs": "use crate::{other::*, Shape};\n\nimpl Shape for Square {}\n",
  // A glob from the parent module (a `use` in a comment does not count), the trait by its path.
  "src/shapes/tri.rs": "// use crate::other::Tri;\nuse super::*;\nimpl crate::Shape for Tri {}\n",
  // The binary's root: self:: is its crate root, and `mod other;` makes crate::other src/other.rs.
  "src/main.rs": "use self::other::Circle;\nmod other;\nimpl lib::Shape for Circle {}\n",
};

Deno.test("Rust impls: super::, self:: and glob imports pick the definition the impl's file sees", async () => {
  const expected = (root: string) =>
    `Found 4 classes deriving from Shape:
1. ${root}/src/other.rs:1-1 struct Circle (impl at src/main.rs:3)
2. ${root}/src/shapes.rs:5-5 struct Circle (impl at src/shapes/round.rs:4)
3. ${root}/src/other.rs:4-6 struct Square (impl at src/shapes/square.rs:3)
4. ${root}/src/shapes.rs:7-7 struct Tri (impl at src/shapes/tri.rs:3)
`;
  await withGraph(MODULES, async (graph, root) => {
    const result = await graph.searchEdges("search_subclasses", "Shape", undefined, opts);
    assert.equal(formatEdgeText(result, false), expected(root));
  });
  // Answer first: the impls' files hold `Shape`, the definitions only their own names, and the
  // crate roots neither; the answer parses the definitions' files too.
  await using dir = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(dir.path, MODULES);
  const graph = CodeGraph.open(dir.path, { ckgDir: cache.path, workers: 0, prefilterMinBytes: 0 });
  try {
    const result = await graph.searchEdges("search_subclasses", "Shape", undefined, opts);
    assert.equal(formatEdgeText(result, false), expected(dir.path));
  } finally {
    graph.close();
  }
});
