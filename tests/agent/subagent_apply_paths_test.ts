/**
 * The `Task` tool's `apply` given a patch whose file names do not stay below the patch's base:
 * a name that climbs with `..` (git's numstat passes it on as written) is refused, naming it,
 * before anything is read or copied, so nothing is ever written outside the workspace or the
 * scratch folder, through a link or otherwise.
 */
import assert from "node:assert/strict";
import { basename, dirname } from "node:path";
import { applyPatch } from "../../src/agent/subagent_apply.ts";
import { withEditor } from "../helpers/editor.ts";
import { tempDir } from "../helpers/temp.ts";

/** A one-line change of `path`, as git would write it. */
function patchOf(path: string): string {
  return [
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1 +1 @@",
    "-one",
    "+two",
    "",
  ].join("\n");
}

Deno.test("task apply: a patch path that climbs with '..' is refused, and no file outside the workspace is written", async () => {
  await withEditor(async ({ ws, executor }) => {
    await using tmp = await tempDir("deft-apply-tmp-");
    await using outside = await tempDir("deft-outside-");
    const victim = `${outside.path}/bashrc`;
    await Deno.writeTextFile(victim, "safe\n");
    await Deno.writeTextFile(`${ws}/a.txt`, "one\n");
    // From the workspace, `../../<parent>/<workspace>/a.txt` is the workspace's own a.txt; from
    // the scratch copy's folder (<tmp>/deft-apply-…/tree) the same name lands in <tmp> itself,
    // where a link to the victim waits.
    const climb = `../../${basename(dirname(ws))}/${basename(ws)}/a.txt`;
    const trap = `${tmp.path}/${basename(dirname(ws))}/${basename(ws)}`;
    await Deno.mkdir(trap, { recursive: true });
    await Deno.symlink(victim, `${trap}/a.txt`);
    const before = Deno.env.get("TMPDIR");
    Deno.env.set("TMPDIR", tmp.path);
    const kept = { id: "child-1", patch: patchOf(climb), file: "/nowhere.patch", base: ws };
    let result;
    try {
      result = await applyPatch(kept, undefined, { workspace: ws, executor });
    } finally {
      if (before === undefined) Deno.env.delete("TMPDIR");
      else Deno.env.set("TMPDIR", before);
    }
    assert.equal(
      await Deno.readTextFile(victim),
      "safe\n",
      "the file behind the link is untouched",
    );
    assert.equal(
      await Deno.readTextFile(`${ws}/a.txt`),
      "one\n",
      "the workspace file is untouched",
    );
    assert.notEqual(result.error_code, 0, "the patch is refused");
    assert.match(result.error ?? "", /climbs with '\.\.'/);
    assert.ok((result.error ?? "").includes(climb), "the refusal names the file");
  });
});
