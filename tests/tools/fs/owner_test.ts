/**
 * An edit keeps the file's owner. Deft running as root (a container, CI) rewrites a file through
 * a temporary file and a rename; without restoring the owner, a user's file would become root's
 * and the user could no longer write it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../helpers/editor.ts";
import { tempDir } from "../../helpers/temp.ts";

const NOBODY = 65534;

/** Whether this process may give a file to another user: root may, others may not. */
async function canChown(): Promise<boolean> {
  await using dir = await tempDir("deft-chown-probe-");
  try {
    Deno.chownSync(dir.path, NOBODY, NOBODY);
    return true;
  } catch {
    return false;
  }
}

const chownable = await canChown();
if (!chownable) {
  console.log(
    `owner_test: ignored: uid ${Deno.uid()} may not chown a file to another user (root only)`,
  );
}

Deno.test({
  name: "edit: a file owned by another user keeps its owner and group after an edit",
  ignore: !chownable,
  async fn() {
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "user.txt");
      await Deno.writeTextFile(path, "value = 1\n");
      await Deno.chown(path, NOBODY, NOBODY);
      for (
        const args of [
          { command: "str_replace", path, old_str: "value = 1", new_str: "value = 2" },
          { command: "insert", path, insert_line: 1, new_str: "more = 3" },
          { command: "undo_edit", path },
        ]
      ) {
        const r = await call(args);
        assert.equal(r.success, true, `${args.command}: ${r.error}`);
        const info = await Deno.stat(path);
        assert.equal(info.uid, NOBODY, `${args.command} gave the file to uid ${info.uid}`);
        assert.equal(info.gid, NOBODY, `${args.command} gave the file to gid ${info.gid}`);
      }
      assert.equal(await Deno.readTextFile(path), "value = 2\n");
    });
  },
});
