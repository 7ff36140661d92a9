/**
 * `--must-patch` judges whether a patch changes anything: the lines Deft writes about a file too
 * large to read are no change the task made, so a patch of only those is empty.
 */
import * as assert from "node:assert/strict";
import { leftOutLines, patchChanges } from "../../src/agent/patch.ts";

Deno.test("patch changes: only 'left out' lines are no change; any diff is", () => {
  assert.equal(patchChanges(""), false);
  assert.equal(patchChanges("\n\n"), false);
  assert.equal(patchChanges(leftOutLines(["disk.img", "data/huge.bin"])), false);
  const diff = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n";
  assert.equal(patchChanges(diff), true);
  assert.equal(patchChanges(leftOutLines(["disk.img"]) + diff), true);
});
