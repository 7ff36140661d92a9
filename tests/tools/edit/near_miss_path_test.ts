/** The hint for a relative path never points outside the workspace. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { relativePathError } from "../../../src/tools/edit/near_miss.ts";
import { withEditor } from "../../helpers/editor.ts";
import { withJsonEditor } from "../../helpers/json_editor.ts";

Deno.test("relativePathError: a suggestion only for paths that stay inside the workspace", () => {
  const ws = "/work/ws";
  for (const [path, meant] of [["src/a.ts", "/work/ws/src/a.ts"], ["a/../b", "/work/ws/b"]]) {
    assert.equal(relativePathError("Bad.", path, ws), `Bad. Maybe you meant ${meant}?`);
  }
  for (const path of ["../etc/passwd", "..", "a/../../x", "../ws-evil/x", "../../../../etc"]) {
    const message = relativePathError("Bad.", path, ws);
    assert.doesNotMatch(message, /Maybe you meant/, path);
    assert.equal(
      message,
      `Bad. Paths must be absolute and inside the workspace ${ws}; ${path} leads outside it.`,
    );
  }
  // A folder next to the workspace whose name starts like it is outside too.
  assert.doesNotMatch(relativePathError("Bad.", "../ws2/x", ws), /\/work\/ws2/);
});

Deno.test("the editors suggest no path outside the workspace for ../etc/passwd", async () => {
  await withEditor(async ({ ws, call }) => {
    for (const command of ["view", "create"]) {
      const r = await call({ command, path: "../etc/passwd", file_text: "x" });
      assert.equal(r.success, false);
      assert.doesNotMatch(r.error!, /Maybe you meant/);
      assert.ok(!r.error!.includes(join(ws, "../etc/passwd")), r.error!);
      assert.match(r.error!, /leads outside it/);
    }
  });
  await withJsonEditor(async ({ ws, call }) => {
    const r = await call({ operation: "view", file_path: "../etc/passwd" });
    assert.equal(r.success, false);
    assert.doesNotMatch(r.error!, /Maybe you meant/);
    assert.match(
      r.error!,
      new RegExp(`inside the workspace ${ws}; \\.\\./etc/passwd leads outside`),
    );
  });
});
