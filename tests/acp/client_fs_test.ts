/**
 * The editor through the client's file system, in process: views follow the disk view's range
 * rules on the buffer, `undo_edit` restores the buffer only when nothing changed it since, a
 * read-only sandbox refuses an edit before the client is asked, and calls the client cannot
 * hold (a directory, no client during the call) go to the ordinary editor.
 */
import assert from "node:assert/strict";
import { type ClientFs, ClientFsEditor } from "../../src/acp/client_fs.ts";
import { ok, Tool, type ToolContext, type ToolExecResult } from "../../src/tools/base.ts";
import { tempDir } from "../helpers/temp.ts";

/** Stands in for the session's (hosted) editor: says it was called. */
class DiskEditor extends Tool {
  readonly name = "str_replace_based_edit_tool";
  readonly description = "disk";
  readonly parameters = [];
  calls: Record<string, unknown>[] = [];
  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    this.calls.push(args);
    return Promise.resolve(ok("on disk"));
  }
}

/** A client holding buffers, keeping every request. */
function client(buffers: Map<string, string>) {
  const asked: string[] = [];
  const fs: ClientFs = {
    read: (path) => {
      asked.push(`read ${path}`);
      return Promise.resolve(buffers.get(path) ?? "");
    },
    write: (path, content) => {
      asked.push(`write ${path}`);
      buffers.set(path, content);
      return Promise.resolve();
    },
  };
  return { fs, asked };
}

async function setUp(settings: ToolContext["settings"] = {}) {
  const dir = await tempDir("deft-acp-clientfs-");
  const workspace = await Deno.realPath(dir.path);
  const file = `${workspace}/a.txt`;
  await Deno.writeTextFile(file, "disk\n");
  const buffers = new Map([[file, "one\ntwo\nthree\n"]]);
  const { fs, asked } = client(buffers);
  const disk = new DiskEditor({ provider: "openai", workspace, settings });
  let connected = true;
  const editor = new ClientFsEditor(disk, () => connected ? fs : undefined);
  return {
    dir,
    workspace,
    file,
    buffers,
    asked,
    disk,
    editor,
    hangUp: () => connected = false,
  };
}

Deno.test("acp client fs: a view of the buffer follows the disk view's range rules", async () => {
  const t = await setUp();
  await using _ = t.dir;
  const part = await t.editor.execute({ command: "view", path: t.file, view_range: [2, 9] });
  assert.equal(
    part.output,
    `Here's the result of running \`cat -n\` on ${t.file}:\n     2\ttwo\n     3\tthree\n` +
      `<NOTE>The file has only 3 lines; shown up to the last one.</NOTE>\n`,
  );
  const bad = await t.editor.execute({ command: "view", path: t.file, view_range: [5, 6] });
  assert.match(bad.error ?? "", /first element `5` should be within .* \[1, 3\]/);
  assert.deepEqual(t.disk.calls, []);
});

Deno.test("acp client fs: undo_edit restores the buffer, unless it changed since", async () => {
  const t = await setUp();
  await using _ = t.dir;
  const edited = await t.editor.execute({
    command: "str_replace",
    path: t.file,
    old_str: "two",
    new_str: "2",
  });
  assert.equal(edited.error, null);
  assert.equal(t.buffers.get(t.file), "one\n2\nthree\n");
  const undone = await t.editor.execute({ command: "undo_edit", path: t.file });
  assert.equal(undone.error, null);
  assert.equal(t.buffers.get(t.file), "one\ntwo\nthree\n");
  await t.editor.execute({ command: "str_replace", path: t.file, old_str: "one", new_str: "1" });
  t.buffers.set(t.file, "typed in the editor\n");
  const refused = await t.editor.execute({ command: "undo_edit", path: t.file });
  assert.notEqual(refused.error, null);
  assert.match(refused.error ?? "", /has changed since that edit/);
  assert.equal(t.buffers.get(t.file), "typed in the editor\n");
  assert.equal(await Deno.readTextFile(t.file), "disk\n");
});

Deno.test("acp client fs: a read-only sandbox refuses an edit before the client is asked", async () => {
  const t = await setUp({ sandbox: "read-only" });
  await using _ = t.dir;
  const result = await t.editor.execute({
    command: "str_replace",
    path: t.file,
    old_str: "two",
    new_str: "2",
  });
  assert.notEqual(result.error, null);
  assert.deepEqual(t.asked, []);
});

Deno.test("acp client fs: directories, creates and calls without a client go to disk", async () => {
  const t = await setUp();
  await using _ = t.dir;
  await t.editor.execute({ command: "view", path: t.workspace });
  await t.editor.execute({ command: "create", path: `${t.workspace}/b.txt`, file_text: "b" });
  t.hangUp();
  await t.editor.execute({ command: "view", path: t.file });
  assert.equal(t.disk.calls.length, 3);
  assert.deepEqual(t.asked, []);
});
