/**
 * One editor over two stores: the same hostile calls, made on the disk and through an ACP
 * client's buffers (a client whose buffers hold what the disk holds), give the same answers,
 * word for word, and leave the same files. Checks, confinement, range rules, size limits, binary
 * refusals, line breaks and undo history are the editor's, whatever the store.
 */
import assert from "node:assert/strict";
import { type ClientFs, ClientFsEditor } from "../../../src/acp/client_fs.ts";
import type { Tool, ToolContext } from "../../../src/tools/base.ts";
import { EditTool } from "../../../src/tools/edit/tool.ts";
import { tempDir } from "../../helpers/temp.ts";

type Call = Record<string, unknown>;

/** The files every case starts from (paths relative to the workspace). */
const FILES: Record<string, string> = {
  "a.txt": "alpha\nbeta\ngamma\nbeta\n",
  "crlf.txt": "one\r\ntwo\r\nthree\r\n",
  "bom.txt": "\ufeffwith a mark\nsecond\n",
  "uni.txt": "café ☕ naïve\n日本語の行\n🙂 end\n",
  "big.txt": "0123456789\n".repeat(20),
  "bin.dat": "abc\0def\n",
  "empty.txt": "",
  "sub/inner.txt": "inside\n",
};

/** Each case: the calls made one after another (`$` stands for the workspace). */
const CASES: Record<string, Call[]> = {
  "view whole": [{ command: "view", path: "$/a.txt" }],
  "view ranges": [
    { command: "view", path: "$/a.txt", view_range: [2, 3] },
    { command: "view", path: "$/a.txt", view_range: [0, 2] },
    { command: "view", path: "$/a.txt", view_range: [3, 1] },
    { command: "view", path: "$/a.txt", view_range: [1] },
    { command: "view", path: "$/a.txt", view_range: [1, 2, 3] },
    { command: "view", path: "$/a.txt", view_range: [9, 10] },
    { command: "view", path: "$/a.txt", view_range: [2, -1] },
    { command: "view", path: "$/a.txt", view_range: [1, 99] },
    { command: "view", path: "$/empty.txt" },
    { command: "view", path: "$/empty.txt", view_range: [1, 1] },
  ],
  "str_replace checks": [
    { command: "str_replace", path: "$/a.txt", new_str: "x" },
    { command: "str_replace", path: "$/a.txt", old_str: "", new_str: "x" },
    { command: "str_replace", path: "$/a.txt", old_str: "alpha", new_str: "alpha" },
    { command: "str_replace", path: "$/a.txt", old_str: "beta", new_str: "b" },
    { command: "str_replace", path: "$/a.txt", old_str: "Alpha", new_str: "a" },
    { command: "str_replace", path: "$/a.txt", old_str: "  gamma", new_str: "g" },
    { command: "str_replace", path: "$/a.txt", old_str: "delta", new_str: "d" },
  ],
  "str_replace, undo, undo again": [
    { command: "str_replace", path: "$/a.txt", old_str: "gamma\n", new_str: "GAMMA\nmore\n" },
    { command: "str_replace", path: "$/a.txt", old_str: "alpha", new_str: "" },
    { command: "undo_edit", path: "$/a.txt" },
    { command: "undo_edit", path: "$/a.txt" },
    { command: "undo_edit", path: "$/a.txt" },
  ],
  "insert checks and edits": [
    { command: "insert", path: "$/a.txt", new_str: "x" },
    { command: "insert", path: "$/a.txt", insert_line: 1 },
    { command: "insert", path: "$/a.txt", insert_line: -1, new_str: "x" },
    { command: "insert", path: "$/a.txt", insert_line: 99, new_str: "x" },
    { command: "insert", path: "$/a.txt", insert_line: 0, new_str: "top" },
    { command: "insert", path: "$/a.txt", insert_line: 5, new_str: "end\nlines" },
    { command: "undo_edit", path: "$/a.txt" },
  ],
  "line breaks, mark and wide characters kept": [
    { command: "str_replace", path: "$/crlf.txt", old_str: "one\ntwo", new_str: "1\n2" },
    { command: "insert", path: "$/crlf.txt", insert_line: 1, new_str: "between" },
    { command: "view", path: "$/bom.txt" },
    { command: "str_replace", path: "$/bom.txt", old_str: "with", new_str: "has" },
    { command: "str_replace", path: "$/uni.txt", old_str: "☕ naïve", new_str: "🍵 naive" },
    { command: "insert", path: "$/uni.txt", insert_line: 2, new_str: "ü" },
    { command: "undo_edit", path: "$/uni.txt" },
    { command: "view", path: "$/uni.txt", view_range: [1, 2] },
  ],
  "too large": [
    { command: "view", path: "$/big.txt" },
    { command: "view", path: "$/big.txt", view_range: [3, 4] },
    { command: "str_replace", path: "$/big.txt", old_str: "0123", new_str: "x" },
    { command: "insert", path: "$/big.txt", insert_line: 1, new_str: "x" },
  ],
  "binary": [
    { command: "view", path: "$/bin.dat" },
    { command: "str_replace", path: "$/bin.dat", old_str: "abc", new_str: "x" },
  ],
  "paths that are refused": [
    { command: "view", path: "a.txt" },
    { command: "str_replace", path: "$/missing.txt", old_str: "a", new_str: "b" },
    { command: "view", path: "/etc/hostname" },
    { command: "view", path: "$/out-link" },
    { command: "str_replace", path: "$/out-link", old_str: "a", new_str: "b" },
    { command: "view", path: "$/fifo" },
    { command: "str_replace", path: "$/fifo", old_str: "a", new_str: "b" },
    { command: "str_replace", path: "$/sub", old_str: "a", new_str: "b" },
    { command: "insert", path: "$/../outside.txt", insert_line: 0, new_str: "x" },
  ],
  "what the buffers leave to the disk": [
    { command: "view", path: "$/sub" },
    { command: "view", path: "$/sub", view_range: [1, 2] },
    { command: "create", path: "$/a.txt", file_text: "x" },
    { command: "create", path: "$/new/deep.txt", file_text: "made\n" },
    { command: "undo_edit", path: "$/new/deep.txt" },
    { command: "undo_edit", path: "$/sub/inner.txt" },
    { command: "delete", path: "$/a.txt" },
  ],
};

/** A fresh workspace with the fixture files, a link out of it and a FIFO. */
async function workspace(root: string): Promise<void> {
  await Deno.remove(root, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${root}/sub`, { recursive: true });
  for (const [name, text] of Object.entries(FILES)) {
    await Deno.writeTextFile(`${root}/${name}`, text);
  }
  await Deno.symlink("/etc/hostname", `${root}/out-link`);
  const fifo = await new Deno.Command("mkfifo", { args: [`${root}/fifo`] }).output();
  assert.ok(fifo.success, "mkfifo");
}

/** A client whose buffers are the files on disk; `asked` counts its requests. */
const asked = { read: 0, write: 0 };
const client: ClientFs = {
  read: (path) => (asked.read++, Deno.readTextFile(path)),
  write: (path, content) => (asked.write++, Deno.writeTextFile(path, content)),
};

/** What a case answered and left: every call's answer, then every fixture file's bytes. */
async function play(root: string, editor: Tool, calls: Call[]): Promise<string[]> {
  const seen: string[] = [];
  for (const call of calls) {
    const args = { ...call, path: String(call.path).replace("$", root) };
    const r = await editor.execute(args);
    seen.push(JSON.stringify({ call, output: r.output, error: r.error, code: r.error_code }));
  }
  for (const name of [...Object.keys(FILES), "new/deep.txt"]) {
    const bytes = await Deno.readFile(`${root}/${name}`).catch(() => null);
    seen.push(`${name}: ${bytes ? [...bytes].join(",") : "absent"}`);
  }
  return seen;
}

Deno.test("one editor, two stores: the same hostile calls give the same answers and files on disk and through the client", async () => {
  await using dir = await tempDir("deft-acp-parity-");
  const root = `${dir.path}/ws`;
  const context: ToolContext = {
    provider: "openai",
    workspace: root,
    settings: { sandbox: "none", maxFileBytes: 128 },
  };
  for (const [name, calls] of Object.entries(CASES)) {
    await workspace(root);
    const onDisk = await play(root, new EditTool(context), calls);
    await workspace(root);
    const viaClient = await play(
      root,
      new ClientFsEditor(new EditTool(context), () => client),
      calls,
    );
    assert.deepEqual(viaClient, onDisk, `case "${name}"`);
  }
  // The buffers were used, not the disk editor throughout.
  assert.ok(asked.read >= 20 && asked.write >= 8, JSON.stringify(asked));
});

Deno.test("one editor, two stores: the client's buffer is what is edited, and undo restores it", async () => {
  await using dir = await tempDir("deft-acp-parity-");
  const root = dir.path;
  const file = `${root}/a.txt`;
  await Deno.writeTextFile(file, "on disk\n");
  const buffers = new Map([[file, "in the buffer\r\nline two\r\n"]]);
  const fs: ClientFs = {
    read: (path) => Promise.resolve(buffers.get(path) ?? ""),
    write: (path, content) => Promise.resolve(void buffers.set(path, content)),
  };
  const context: ToolContext = {
    provider: "openai",
    workspace: root,
    settings: { sandbox: "none" },
  };
  const editor = new ClientFsEditor(new EditTool(context), () => fs);
  const edited = await editor.execute({
    command: "str_replace",
    path: file,
    old_str: "buffer\nline",
    new_str: "editor\nrow",
  });
  assert.equal(edited.error, null);
  assert.equal(buffers.get(file), "in the editor\r\nrow two\r\n");
  assert.deepEqual(editor.takeEdit(file), {
    before: "in the buffer\r\nline two\r\n",
    after: "in the editor\r\nrow two\r\n",
  });
  const undone = await editor.execute({ command: "undo_edit", path: file });
  assert.match(
    undone.output ?? "",
    /^Last edit to .*a\.txt undone successfully\. Here's the result/,
  );
  assert.equal(buffers.get(file), "in the buffer\r\nline two\r\n");
  assert.equal(await Deno.readTextFile(file), "on disk\n");
});
