/** undo_edit: many levels per file, create undone, and refusal when the file changed since. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../helpers/editor.ts";

Deno.test("undo: twelve edits undone one by one restore every version", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "start\r\n");
    const versions = [await Deno.readFile(path)];
    for (let i = 0; i < 12; i++) {
      const r = i % 2 === 0
        ? await call({ command: "insert", path, insert_line: i / 2, new_str: `line ${i}` })
        : await call({ command: "str_replace", path, old_str: `line ${i - 1}`, new_str: `L${i}` });
      assert.equal(r.success, true, r.error ?? "");
      versions.push(await Deno.readFile(path));
    }
    for (let i = 12; i > 0; i--) {
      const r = await call({ command: "undo_edit", path });
      assert.equal(r.success, true, r.error ?? "");
      assert.match(r.output!, new RegExp(`^Last edit to ${path} undone successfully\\.`));
      assert.deepEqual(await Deno.readFile(path), versions[i - 1], `undo to version ${i - 1}`);
    }
    const none = await call({ command: "undo_edit", path });
    assert.equal(none.error, `No edit history found for ${path}.`);
  });
});

Deno.test("undo: history is per file", async () => {
  await withEditor(async ({ ws, call }) => {
    const a = join(ws, "a.txt");
    const b = join(ws, "b.txt");
    await Deno.writeTextFile(a, "a\n");
    await Deno.writeTextFile(b, "b\n");
    await call({ command: "str_replace", path: a, old_str: "a", new_str: "A" });
    await call({ command: "str_replace", path: b, old_str: "b", new_str: "B" });
    await call({ command: "undo_edit", path: a });
    assert.equal(await Deno.readTextFile(a), "a\n");
    assert.equal(await Deno.readTextFile(b), "B\n");
  });
});

Deno.test("undo: a create is undone by removing the file and the directories it made", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "new", "dir", "f.txt");
    await call({ command: "create", path, file_text: "x\n" });
    await call({ command: "insert", path, insert_line: 1, new_str: "y" });
    await call({ command: "undo_edit", path });
    assert.equal(await Deno.readTextFile(path), "x\n");
    const r = await call({ command: "undo_edit", path });
    assert.match(
      r.output!,
      /undone successfully: the file had been made by `create`, so it has been removed/,
    );
    await assert.rejects(Deno.stat(join(ws, "new")), Deno.errors.NotFound);
    const created = await call({ command: "create", path, file_text: "again" });
    assert.equal(created.success, true);
  });
});

Deno.test("undo: refused when the file changed since the edit, and nothing is lost", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "one\ntwo\n");
    await call({ command: "str_replace", path, old_str: "two", new_str: "2" });
    await Deno.writeTextFile(path, "one\n2\nthree (added by bash)\n");
    const r = await call({ command: "undo_edit", path });
    assert.match(
      r.error!,
      /^Cannot undo the last edit of .*: the file has changed since that edit/,
    );
    assert.equal(await Deno.readTextFile(path), "one\n2\nthree (added by bash)\n");
    // Same size but different bytes where the edit was.
    await Deno.writeTextFile(path, "one\nX\n");
    assert.match((await call({ command: "undo_edit", path })).error!, /has changed since/);

    const created = join(ws, "c.txt");
    await call({ command: "create", path: created, file_text: "mine" });
    await Deno.writeTextFile(created, "theirs");
    assert.match(
      (await call({ command: "undo_edit", path: created })).error!,
      /has changed since it was created/,
    );
    assert.equal(await Deno.readTextFile(created), "theirs");
  });
});

Deno.test("undo: history lives in the tool instance", async () => {
  await withEditor(async ({ ws, call, tool }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "a\n");
    await call({ command: "str_replace", path, old_str: "a", new_str: "b" });
    const { EditTool } = await import("../../../src/tools/edit/tool.ts");
    const other = new EditTool(tool.context);
    const r = await other.execute({ command: "undo_edit", path });
    assert.equal(r.error, `No edit history found for ${path}.`);
  });
});
