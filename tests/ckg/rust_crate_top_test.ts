/**
 * A Rust crate whose root file (`lib.rs` or `main.rs`) sits at the top of the workspace, not in
 * `src/`: its modules are files beside it (`b.rs` is `crate::b`), so `impl Shape for Circle` with
 * two `Circle`s in the crate is joined, through the impl file's glob `use`, to the one that glob
 * brings in. Answers written here by hand.
 */
import assert from "node:assert/strict";
import { CodeGraph } from "../../src/ckg/graph.ts";
import { formatEdgeText } from "../../src/ckg/edge_format.ts";
import { rustModuleOf, usedNames } from "../../src/ckg/rust_modules.ts";
import { tempDir, writeTree } from "../helpers/ckg.ts";

async function subclassesOfShape(
  files: Record<string, string>,
  options: { prefilterMinBytes?: number } = {},
): Promise<{ text: string; root: string }> {
  await using dir = await tempDir();
  await using cache = await tempDir("deft-ckg-cache-");
  await writeTree(dir.path, files);
  const graph = CodeGraph.open(dir.path, {
    ckgDir: cache.path,
    workers: 0,
    prefilterMinBytes: options.prefilterMinBytes,
  });
  try {
    const result = await graph.searchEdges("search_subclasses", "Shape", undefined, {
      body: false,
    });
    return { text: formatEdgeText(result, false), root: dir.path };
  } finally {
    graph.close();
  }
}

// Both Circles sit in the crate root's own folder, so "the only one in its folder" cannot decide:
// only the glob can.
const LIB_AT_TOP = {
  "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub mod shapes;\npub trait Shape {}\n",
  "a.rs": "pub struct Circle;\n",
  "b.rs": "\n\npub struct Circle {\n    r: f64,\n}\n",
  // crate::b through a glob; a glob from crate::a in a comment does not count.
  "c.rs": "// use crate::a::*;\nuse crate::b::*;\nuse crate::Shape;\n\nimpl Shape for Circle {}\n",
  "shapes.rs": "pub mod round;\npub struct Square;\n",
  "other.rs": "pub struct Square;\n",
  // super:: of crate::shapes::round is crate::shapes: shapes.rs at the top, not other.rs.
  "shapes/round.rs": "use super::*;\nuse crate::Shape;\nimpl Shape for Square {}\n",
};

Deno.test("Rust crate at the workspace top: a glob use picks the Circle of the module it names", async () => {
  const expected = (root: string) =>
    `Found 2 classes deriving from Shape:
1. ${root}/b.rs:3-5 struct Circle (impl at c.rs:5)
2. ${root}/shapes.rs:2-2 struct Square (impl at shapes/round.rs:3)
`;
  const full = await subclassesOfShape(LIB_AT_TOP);
  assert.equal(full.text, expected(full.root));
  // Answer first (the definitions' files hold only their own names): the same answer.
  const first = await subclassesOfShape(LIB_AT_TOP, { prefilterMinBytes: 0 });
  assert.equal(first.text, expected(first.root));
});

Deno.test("Rust crate at the workspace top: main.rs as the root reads the same", async () => {
  const files: Record<string, string> = { ...LIB_AT_TOP, "main.rs": LIB_AT_TOP["lib.rs"] };
  delete files["lib.rs"];
  const { text, root } = await subclassesOfShape(files);
  assert.equal(
    text,
    `Found 2 classes deriving from Shape:
1. ${root}/b.rs:3-5 struct Circle (impl at c.rs:5)
2. ${root}/shapes.rs:2-2 struct Square (impl at shapes/round.rs:3)
`,
  );
});

Deno.test("Rust crate at the workspace top: module paths count from the top folder", () => {
  for (const root of ["lib.rs", "main.rs"]) {
    const isFile = (path: string) => path === root;
    assert.deepEqual(rustModuleOf(root, isFile), ["crate"]);
    assert.deepEqual(rustModuleOf("b.rs", isFile), ["crate", "b"]);
    assert.deepEqual(rustModuleOf("shapes/mod.rs", isFile), ["crate", "shapes"]);
    assert.deepEqual(rustModuleOf("shapes/round.rs", isFile), ["crate", "shapes", "round"]);
    assert.deepEqual(
      usedNames("use super::*;\n", ["crate", "shapes", "round"]).map((u) => u.modules),
      [[["crate", "shapes"]]],
    );
  }
});
