/**
 * Callers, references and subclasses in all eight languages, on the small fixtures in
 * tests/fixtures/ckg/edges (one folder per language), with anonymous functions, calls inside
 * macros and re-exports. Every expected answer was worked out by reading the fixture. A use in an
 * anonymous function no named one encloses is that function's, in references as in callers.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import type { EdgeResult } from "../../src/ckg/edge_search.ts";
import { tempDir } from "../helpers/ckg.ts";

const FIXTURES = new URL("../fixtures/ckg/edges/", import.meta.url).pathname;

function callers(r: EdgeResult): string[] {
  return r.callers.map(({ symbol: s, lines }) =>
    `${s.path}:${s.startLine}-${s.endLine} ${s.className ? `${s.className}.` : ""}${s.name}@${
      lines.join(",")
    }`
  );
}

/** `path:line kind [in name]`; an anonymous function as `[Class.]<anonymous> start-end`. */
function references(r: EdgeResult): string[] {
  return r.references.map(({ ref, enclosing: e }) => {
    const name = e?.name === "<anonymous>"
      ? `${e.className ? `${e.className}.` : ""}<anonymous> ${e.startLine}-${e.endLine}`
      : e?.name;
    return `${ref.path}:${ref.line} ${ref.kind}${name ? ` in ${name}` : ""}`;
  });
}

function subclasses(r: EdgeResult): string[] {
  return r.subclasses.map((m) =>
    `${m.path}:${m.symbol ? `${m.symbol.startLine}-${m.symbol.endLine}` : m.line} ${m.name}${
      m.depth > 1 ? ` via ${m.base}` : ""
    }${m.impl ? ` impl at ${m.impl.path}:${m.impl.line}` : ""}`
  );
}

interface Expected {
  callers: string[];
  references: string[];
  /** Base name → direct subclasses, and with `indirect`. */
  subclasses: [string, string[], string[]][];
}

const EXPECTED: Record<string, Expected> = {
  // A lambda bound to a name is that function; one inside `main` is main's; one at the top level
  // of the module is anonymous.
  py: {
    callers: [
      "py/app.py:7-8 Mid.run@8",
      "py/app.py:13-13 handler@13",
      "py/app.py:15-17 main@16",
      "py/app.py:19-19 <anonymous>@19",
    ],
    references: [
      "py/app.py:1 import",
      "py/app.py:8 call in run",
      "py/app.py:13 call in handler",
      "py/app.py:16 call in main",
      "py/app.py:19 call in <anonymous> 19-19",
    ],
    subclasses: [["Base", ["py/app.py:6-8 Mid"], [
      "py/app.py:6-8 Mid",
      "py/app.py:10-11 Leaf via Mid",
    ]]],
  },
  // A lambda in a field initializer is an anonymous function of its class.
  java: {
    callers: [
      "java/App.java:5-5 Mid.run@5",
      "java/App.java:8-8 Leaf.<anonymous>@8",
      "java/App.java:9-9 Leaf.go@9",
    ],
    references: [
      "java/App.java:5 call in run",
      "java/App.java:8 call in Leaf.<anonymous> 8-8",
      "java/App.java:9 call in go",
    ],
    subclasses: [["Base", ["java/App.java:4-6 Mid"], [
      "java/App.java:4-6 Mid",
      "java/App.java:7-10 Leaf via Mid",
    ]]],
  },
  // b.ts re-exports helper and Base (as Root): references. A default-exported arrow is anonymous.
  ts: {
    callers: [
      "ts/c.ts:3-3 Mid.run@3",
      "ts/c.ts:6-6 <anonymous>@6",
      "ts/c.ts:7-7 g@7",
    ],
    references: [
      "ts/b.ts:1 import",
      "ts/c.ts:1 import",
      "ts/c.ts:3 call in run",
      "ts/c.ts:6 call in <anonymous> 6-6",
      "ts/c.ts:7 call in g",
    ],
    subclasses: [
      ["Root", ["ts/c.ts:2-4 Mid"], ["ts/c.ts:2-4 Mid", "ts/c.ts:5-5 Leaf via Mid"]],
      // The alias is not followed back to Base.
      ["Base", [], []],
    ],
  },
  js: {
    callers: [
      "js/lib.js:3-3 Mid.run@3",
      "js/lib.js:4-4 <anonymous>@4",
      "js/lib.js:5-5 <anonymous>@5",
    ],
    references: [
      "js/lib.js:3 call in run",
      "js/lib.js:4 call in <anonymous> 4-4",
      "js/lib.js:5 call in <anonymous> 5-5",
      "js/lib.js:6 import",
    ],
    subclasses: [["Base", ["js/lib.js:3-3 Mid"], ["js/lib.js:3-3 Mid"]]],
  },
  // The call inside LOG(...) is a call; QUIET before switch makes no function `switch`.
  c: {
    callers: ["c/main.c:5-12 run@9,11"],
    references: ["c/main.c:9 call in run", "c/main.c:11 call in run"],
    subclasses: [["Base", [], []]],
  },
  // Inside CHECK(...) and a lambda in a method: the method's; a lambda at namespace scope: anonymous.
  cpp: {
    callers: [
      "cpp/shapes.cpp:6-10 Mid.run@7,8",
      "cpp/shapes.cpp:11-11 <anonymous>@11",
    ],
    references: [
      "cpp/shapes.cpp:7 call in run",
      "cpp/shapes.cpp:8 call in run",
      "cpp/shapes.cpp:11 call in <anonymous> 11-11",
    ],
    subclasses: [["Base", ["cpp/shapes.cpp:3-3 Mid"], [
      "cpp/shapes.cpp:3-3 Mid",
      "cpp/shapes.cpp:4-4 Leaf via Mid",
    ]]],
  },
  // A func literal bound to a package-level variable is known by its name; one in Main is Main's;
  // one in a package-level table is anonymous.
  go: {
    callers: [
      "go/zoo.go:11-11 Mid.Run@11",
      "go/zoo.go:13-13 hook@13",
      "go/zoo.go:15-15 Main@15",
      "go/zoo.go:17-17 <anonymous>@17",
    ],
    references: [
      "go/zoo.go:11 call in Run",
      "go/zoo.go:13 call in hook",
      "go/zoo.go:15 call in Main",
      "go/zoo.go:17 call in <anonymous> 17-17",
    ],
    subclasses: [["Base", ["go/zoo.go:4-4 Mid"], [
      "go/zoo.go:4-4 Mid",
      "go/zoo.go:5-7 Leaf via Mid",
    ]]],
  },
  // Calls inside assert_eq!/println! count; a closure in a static is anonymous; `pub use`
  // re-exports are imports; the impl's type is reported at its definition.
  rust: {
    callers: [
      "rust/lib.rs:6-11 run@7,8,9",
      "rust/lib.rs:12-12 <anonymous>@12",
    ],
    references: [
      "rust/lib.rs:1 import",
      "rust/lib.rs:7 call in run",
      "rust/lib.rs:8 call in run",
      "rust/lib.rs:9 call in run",
      "rust/lib.rs:12 call in <anonymous> 12-12",
    ],
    subclasses: [["Shape", [
      "rust/lib.rs:3-3 Solid",
      "rust/lib.rs:4-4 Cube impl at rust/lib.rs:5",
    ], [
      "rust/lib.rs:3-3 Solid",
      "rust/lib.rs:4-4 Cube impl at rust/lib.rs:5",
    ]]],
  },
};

Deno.test("edges in all eight languages: callers, references and subclasses, worked out by hand", async () => {
  await using cache = await tempDir("deft-ckg-cache-");
  const root = FIXTURES.replace(/\/$/, "");
  const graph = CodeGraph.open(root, { ckgDir: cache.path, workers: 0 });
  try {
    for (const [lang, want] of Object.entries(EXPECTED)) {
      const dir = `${root}/${lang}`;
      const opts = { body: false };
      assert.deepEqual(
        callers(await graph.searchEdges("search_callers", "helper", dir, opts)),
        want.callers,
        `${lang} callers`,
      );
      assert.deepEqual(
        references(await graph.searchEdges("search_references", "helper", dir, opts)),
        want.references,
        `${lang} references`,
      );
      for (const [base, direct, indirect] of want.subclasses) {
        assert.deepEqual(
          subclasses(await graph.searchEdges("search_subclasses", base, dir, opts)),
          direct,
          `${lang} subclasses of ${base}`,
        );
        assert.deepEqual(
          subclasses(
            await graph.searchEdges("search_subclasses", base, dir, { ...opts, indirect: true }),
          ),
          indirect,
          `${lang} subclasses of ${base}, indirect`,
        );
      }
    }
    assert.deepEqual(
      (await graph.search("search_function", "switch", `${root}/c`, { body: false })).matches,
      [],
    );
  } finally {
    graph.close();
  }
});
