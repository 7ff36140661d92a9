/** Rust module paths of files, and the names `use` declarations bring in, worked out by hand. */
import assert from "node:assert/strict";
import { rustModuleOf, usedNames } from "../../src/ckg/rust_modules.ts";

Deno.test("rust modules: a file's module follows from the crate root above it", () => {
  const files = new Set(["src/lib.rs", "src/a.rs", "src/a/b.rs", "src/c/mod.rs", "tools/main.rs"]);
  const isFile = (path: string) => files.has(path);
  assert.deepEqual(rustModuleOf("src/lib.rs", isFile), ["crate"]);
  assert.deepEqual(rustModuleOf("src/a.rs", isFile), ["crate", "a"]);
  assert.deepEqual(rustModuleOf("src/a/b.rs", isFile), ["crate", "a", "b"]);
  assert.deepEqual(rustModuleOf("src/c/mod.rs", isFile), ["crate", "c"]);
  assert.deepEqual(rustModuleOf("tools/x/y.rs", isFile), ["crate", "x", "y"]);
  assert.equal(rustModuleOf("loose/z.rs", isFile), undefined);
});

Deno.test("rust modules: use declarations expand, resolve super/self/crate, and skip comments", () => {
  const text = "use crate::a::*;\nuse super::Shape; // use crate::z::Q;\n" +
    "/* use crate::y::R; */\npub(crate) use self::x::{Y as Z, w::{self, V}};\n" +
    "#[cfg(test)]\nuse foo::Bar;use super::super::K;\nfn f() { let user = 1; }\n";
  const used = usedNames(text, ["crate", "a", "b"]).map((u) =>
    `${u.modules.map((m) => m.join("::")).join(" | ")} ${u.name}${
      u.local !== u.name ? ` as ${u.local}` : ""
    }`
  );
  assert.deepEqual(used, [
    "crate::a *",
    "crate::a Shape",
    "crate::a::b::x Y as Z",
    "crate::a::b::x w",
    "crate::a::b::x::w V",
    "crate::a::b::foo | crate::foo Bar",
    "crate K",
  ]);
  // Above the crate root there is nothing to go up to.
  assert.deepEqual(usedNames("use super::super::X;\n", ["crate", "a"]), []);
});

Deno.test("rust modules: a hostile file (no semicolons, endless braces and spaces) is read in linear time", () => {
  const hostile = [
    "{use a".repeat(40_000),
    `use ${" ".repeat(200_000)}`,
    `use a::{${"b,".repeat(50_000)}`,
    `;use a::{{{${"{c".repeat(50_000)}`,
    "]use a".repeat(40_000),
    "/* use a::B; ".repeat(40_000),
  ];
  for (const text of hostile) {
    const started = performance.now();
    assert.deepEqual(usedNames(text, ["crate"]), []);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 1000, `${text.slice(0, 12)}…: ${elapsed.toFixed(0)} ms`);
  }
  // Nested one level, and a `use` after a long one, still read.
  assert.deepEqual(
    usedNames(`use a::{b::{C, D}, E};\n${"// x\n".repeat(1000)}use super::F;`, ["crate", "m"])
      .map((u) => `${u.modules[0].join("::")} ${u.name}`),
    ["crate::m::a::b C", "crate::m::a::b D", "crate::m::a E", "crate F"],
  );
});
