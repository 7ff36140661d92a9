/**
 * The `Task` tool's `apply` and file names git would quote by default: a UTF-8 name (`é.txt`)
 * is applied like any other, while a name with a newline, a tab or a quote (which git quotes even
 * so) is refused clearly, naming it, and nothing is changed.
 */
import assert from "node:assert/strict";
import { applyPatch } from "../../src/agent/subagent_apply.ts";
import { withEditor } from "../helpers/editor.ts";

/** A one-line change of `path` ("one" to "two"); `quoted`: git's quoted spelling of it. */
function changeOf(path: string, quoted = path): string {
  const [a, b] = quoted.startsWith('"')
    ? [`"a/${quoted.slice(1)}`, `"b/${quoted.slice(1)}`]
    : [`a/${path}`, `b/${path}`];
  return [`diff --git ${a} ${b}`, `--- ${a}`, `+++ ${b}`, "@@ -1 +1 @@", "-one", "+two", ""]
    .join("\n");
}

/** A new file `path` holding "new". */
function creationOf(path: string): string {
  return [
    `diff --git a/${path} b/${path}`,
    "new file mode 100644",
    "--- /dev/null",
    `+++ b/${path}`,
    "@@ -0,0 +1 @@",
    "+new",
    "",
  ].join("\n");
}

Deno.test("task apply: UTF-8 file names are applied, changed and created", async () => {
  await withEditor(async ({ ws, executor }) => {
    await Deno.mkdir(`${ws}/données`);
    await Deno.writeTextFile(`${ws}/é.txt`, "one\n");
    const patch = changeOf("é.txt") + creationOf("données/café ☕.txt");
    const kept = { id: "child-1", patch, file: "/nowhere.patch", base: ws };
    const result = await applyPatch(kept, undefined, { workspace: ws, executor });
    assert.equal(result.error_code, 0, result.error ?? "");
    assert.equal(await Deno.readTextFile(`${ws}/é.txt`), "two\n");
    assert.equal(await Deno.readTextFile(`${ws}/données/café ☕.txt`), "new\n");
    assert.match(result.output ?? "", /applied: é\.txt/);
  });
});

Deno.test("task apply: a name with a newline, a tab or a quote is refused, naming it; nothing changes", async () => {
  for (
    const [name, quoted] of [
      ["new\nline.txt", '"new\\nline.txt"'],
      ["a\tb.txt", '"a\\tb.txt"'],
      ['say"hi".txt', '"say\\"hi\\".txt"'],
    ]
  ) {
    await withEditor(async ({ ws, executor }) => {
      await Deno.writeTextFile(`${ws}/${name}`, "one\n");
      await Deno.writeTextFile(`${ws}/é.txt`, "one\n");
      const patch = changeOf(name, quoted) + changeOf("é.txt");
      const kept = { id: "child-1", patch, file: "/nowhere.patch", base: ws };
      const result = await applyPatch(kept, undefined, { workspace: ws, executor });
      assert.notEqual(result.error_code, 0, `${quoted} was applied`);
      assert.match(result.error ?? "", /name holds a newline, a tab, a quote/, result.error ?? "");
      assert.ok((result.error ?? "").includes(quoted), result.error ?? "");
      assert.ok((result.error ?? "").includes(`"files": ["é.txt"]`), "the rest can be applied");
      assert.equal(await Deno.readTextFile(`${ws}/${name}`), "one\n");
      assert.equal(await Deno.readTextFile(`${ws}/é.txt`), "one\n");
    });
  }
});
