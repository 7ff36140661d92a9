/**
 * Searching: exact names only (metacharacters are plain characters), close names when nothing
 * matches, class members from inside and outside the class body, Trae's output and clipping.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { formatSearchText, OUTPUT_LIMIT, searchJson } from "../../src/ckg/format.ts";
import { editDistance } from "../../src/ckg/search.ts";
import { LANGS_DIR, tempDir, writeTree } from "../helpers/ckg.ts";

/** A fresh graph over the language fixtures plus a few extras, for one test: no test depends on
 * another's graph or on running order, and `await using` removes it when the test ends. */
async function fixtureGraph(): Promise<
  { graph: CodeGraph; root: string } & AsyncDisposable
> {
  const ws = await tempDir();
  const cache = await tempDir();
  const files: Record<string, string> = {};
  for await (const entry of Deno.readDir(LANGS_DIR)) {
    files[`langs/${entry.name}`] = await Deno.readTextFile(LANGS_DIR + entry.name);
  }
  files["meta/names.py"] = [
    "def a_b(): pass",
    "def axb(): pass",
    "def parse_args(): pass",
    "def parse_argv(): pass",
    "def ParseArgs(): pass",
    "class Parser: pass",
    "",
  ].join("\n");
  await writeTree(ws.path, files);
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  return {
    graph,
    root: ws.path,
    async [Symbol.asyncDispose]() {
      graph.close();
      await ws.remove();
      await cache.remove();
    },
  };
}

Deno.test({
  name: "search: names are exact; SQL and glob metacharacters are plain characters",
  async fn() {
    await using fixture = await fixtureGraph();
    const { graph } = fixture;
    const find = async (name: string) =>
      (await graph.search("search_function", name, undefined, { body: false })).matches.map((m) =>
        m.symbol.name
      );
    assert.deepEqual(await find("a_b"), ["a_b"], "_ is not a wildcard");
    for (
      const name of [
        "a%b",
        "a?b",
        "a*",
        "*",
        "%",
        "_",
        "a[_x]b",
        "' OR '1'='1",
        "x'); DROP TABLE symbols; --",
        "area_of\0",
      ]
    ) {
      assert.deepEqual(await find(name), [], name);
    }
    assert.deepEqual(await find("area_of"), ["area_of"], "the tables are intact");
  },
});

Deno.test("search: nothing found lists close names, the likeliest first", async () => {
  await using fixture = await fixtureGraph();
  const { graph } = fixture;
  const miss = async (
    command: "search_function" | "search_class" | "search_class_method",
    n: string,
  ) => formatSearchText(await graph.search(command, n, undefined, { body: false }), false);
  assert.equal(
    await miss("search_function", "Area_Of"),
    "No functions named Area_Of found.\nClose names: area_of (function).",
  );
  assert.equal(
    await miss("search_function", "aera_of"),
    "No functions named aera_of found.\nClose names: area_of (function).",
  );
  assert.equal(
    await miss("search_function", "parse_arg"),
    "No functions named parse_arg found.\n" +
      "Close names: parse_args (function), parse_argv (function), ParseArgs (function), " +
      "Parser (class, use search_class).",
  );
  // The same name as another kind: the command was wrong.
  assert.equal(
    await miss("search_function", "Circle"),
    "No functions named Circle found.\n" +
      "Close names: Circle (class, use search_class), Circle (class method, use search_class_method).",
  );
  assert.equal(
    await miss("search_class", "Shap"),
    "No classes named Shap found.\nClose names: Shape (class), " +
      "Shape (class method, use search_class_method), Shapes (class), " +
      "Shapes (class method, use search_class_method), ShapeKind (class).",
  );
  assert.equal(
    await miss("search_class_method", "zzzzqqq"),
    "No class methods named zzzzqqq found.",
  );
});

Deno.test("search: Cls.method, Cls::method and Cls#method find that class's method", async () => {
  await using fixture = await fixtureGraph();
  const { graph } = fixture;
  for (const name of ["Circle.area", "geo::Circle::area", "Circle#area"]) {
    const result = await graph.search("search_class_method", name, undefined, { body: false });
    assert.deepEqual(
      result.matches.map((m) => `${m.symbol.path}:${m.symbol.startLine} ${m.symbol.className}`),
      ["langs/shapes.cpp:6 Circle", "langs/shapes.cpp:7 Circle", "langs/shapes.py:47 Circle"],
      name,
    );
  }
  const fn = await graph.search("search_function", "Shape.area", undefined, { body: false });
  assert.equal(fn.matches.length, 0);
  assert.ok(fn.suggestions.some((s) => s.name === "area" && s.kind === "method"));
});

Deno.test("search: classes list their fields and methods, including those defined outside", async () => {
  await using fixture = await fixtureGraph();
  const { graph, root } = fixture;
  const classes = async (name: string) =>
    (await graph.search("search_class", name, `${root}/langs`, { body: false })).matches;
  const go = (await classes("Circle")).find((m) => m.symbol.path.endsWith(".go"))!;
  assert.deepEqual(go.fields, ["R float64", "name string"]);
  assert.deepEqual(go.methods, [
    "func (c Circle) Area() float64",
    "func (c *Circle) Perimeter() float64",
  ]);
  const rust = (await classes("Point")).find((m) => m.symbol.path.endsWith(".rs"))!;
  assert.deepEqual(rust.fields, ["pub x: f64", "y: f64"]);
  assert.deepEqual(rust.methods, [
    "pub fn new(x: f64, y: f64) -> Self",
    "fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result",
  ]);
  const cpp = (await classes("Circle")).find((m) => m.symbol.path.endsWith(".hpp"))!;
  assert.deepEqual(cpp.fields, ["double r_"]);
  assert.deepEqual(cpp.methods, [
    "explicit Circle(double r)",
    "double area() const override",
    "double area(double scale) const",
  ], "out-of-class definitions of declared methods are not repeated");
  const py = (await classes("Circle")).find((m) => m.symbol.path.endsWith(".py"))!;
  assert.deepEqual(py.methods, ["def __init__(self, r)", "def area(self) -> float"]);
});

Deno.test("search: Trae's text, with bodies and nested-function parents", async () => {
  await using fixture = await fixtureGraph();
  const { graph, root } = fixture;
  const result = await graph.search("search_function", "helper", `${root}/langs`);
  assert.equal(
    formatSearchText(result, true),
    "Found 3 functions named helper:\n" +
      `1. ${root}/langs/shapes.go:36-36 within function New\n` +
      "helper := func() float64 { return r }\n\n" +
      `2. ${root}/langs/shapes.py:9-12 within function area_of\n` +
      "def helper(x):\n        def deeper():\n            return x\n        return deeper()\n\n" +
      `3. ${root}/langs/shapes.rs:60-62\n` +
      "pub fn helper() -> i32 {\n        1\n    }\n\n",
  );
  const method = await graph.search("search_class_method", "fmt", `${root}/langs`);
  assert.equal(
    formatSearchText(method, false),
    `Found 1 class methods named fmt:\n1. ${root}/langs/shapes.rs:47-49 within class Point\n`,
  );
  const cls = await graph.search("search_class", "Meta", `${root}/langs`);
  assert.equal(
    formatSearchText(cls, true),
    `Found 1 classes named Meta:\n1. ${root}/langs/shapes.py:50-54\n` +
      'Fields:\n- ordering = ["r"]\nMethods:\n- def describe(self)\n' +
      'class Meta:\n        ordering = ["r"]\n\n        def describe(self):\n            return "meta"\n\n',
  );
  const json = searchJson(cls, root);
  assert.equal(json.found, 1);
  assert.deepEqual((json.matches as Record<string, unknown>[])[0].methods, ["def describe(self)"]);
});

Deno.test("search: long output is clipped at 16,000 characters with the count left out", async () => {
  const ws = await tempDir();
  const cache = await tempDir();
  const body = "    x = 1\n".repeat(40);
  const source = Array.from({ length: 60 }, () => `def dup():\n${body}`).join("\n");
  await writeTree(ws.path, { "many.py": source });
  const graph = CodeGraph.open(ws.path, { ckgDir: cache.path, workers: 0 });
  try {
    const result = await graph.search("search_function", "dup");
    assert.equal(result.matches.length, 60);
    const text = formatSearchText(result, true);
    const shown = text.slice(0, OUTPUT_LIMIT);
    const entries = shown.match(/^\d+\. /gm)!.length;
    assert.ok(
      text.endsWith(`\n<response clipped> ${60 - entries} more entries not shown`),
      text.slice(-80),
    );
    assert.equal(
      text.length,
      OUTPUT_LIMIT + `\n<response clipped> ${60 - entries} more entries not shown`.length,
    );
    assert.ok(formatSearchText(result, false).length < OUTPUT_LIMIT, "without bodies it fits");
    // Reading only the bodies that can be shown changes nothing in the text.
    const budgeted = await graph.search("search_function", "dup", undefined, {
      body: true,
      bodyBudget: OUTPUT_LIMIT,
    });
    assert.ok(budgeted.matches.filter((m) => m.body !== undefined).length < 60);
    assert.equal(formatSearchText(budgeted, true), text);
  } finally {
    graph.close();
    await ws.remove();
    await cache.remove();
  }
});

Deno.test("search: edit distance gives up past the limit", () => {
  assert.equal(editDistance("kitten", "sitting", 3), 3);
  assert.equal(editDistance("kitten", "sitting", 2), 3);
  assert.equal(editDistance("abc", "abc", 0), 0);
  assert.equal(editDistance("a", "abcdef", 2), 3);
});
