/**
 * `deft acp` with a client that offers `fs/read_text_file` and `fs/write_text_file`: the editor
 * views and edits the client's (unsaved) buffer, writes through the client with the exact text,
 * leaves the disk alone, fails a call clearly when the client refuses the write, and never asks
 * the client about a path outside the workspace.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type ClientFiles, updatesOf, withAcp } from "../../helpers/acp_client.ts";

const EDIT = "str_replace_based_edit_tool";
const DISK = "def add(a, b):\n    return a - b\n";

/** One prompt in a new session in `cwd`, the client offering its file system. */
async function promptWithFs(
  mock: MockLLM,
  cwd: string,
  files: ClientFiles,
  approval: [string, string[]] = ["never", []],
) {
  return await withAcp(mock, ["--approval", approval[0]], approval[1], async (ctx) => {
    await ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    const session = await ctx.request("session/new", { cwd, mcpServers: [] });
    return await ctx.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "fix calc.py" }],
    });
  }, { fs: files });
}

/** The text of the tool result the model got for its `index`th call (0-based). */
function toolResultSeen(mock: MockLLM, index: number): string {
  const body = mock.requests.at(-1)!.body as {
    messages: { role: string; content: unknown }[];
  };
  const results = body.messages.filter((m) => m.role === "tool");
  return JSON.stringify(results[index]?.content ?? "");
}

Deno.test("acp fs: the model views and edits the client's unsaved buffer, written back exactly", async () => {
  await using dir = await tempDir("deft-acp-fs-");
  const file = `${dir.path}/calc.py`;
  await Deno.writeTextFile(file, DISK);
  // The editor's buffer: unsaved changes, CRLF line ends and a character outside ASCII.
  const buffer = "def add(a, b):\r\n    return a - b  # unsaved ✓\r\n\r\n# end\r\n";
  const files: ClientFiles = { buffers: new Map([[file, buffer]]), reads: [], writes: [] };
  const mock = MockLLM.start([
    chatStream(chatToolCalls([[EDIT, { command: "view", path: file }]])),
    chatStream(chatToolCalls([[EDIT, {
      command: "str_replace",
      path: file,
      old_str: "return a - b  # unsaved ✓",
      new_str: "return a + b  # saved ✓",
    }]])),
    chatStream(chatText("Fixed.")),
  ]);
  try {
    const { value, code, run } = await promptWithFs(mock, dir.path, files);
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    // The model saw the buffer, not the disk.
    const seen = toolResultSeen(mock, 0);
    assert.match(seen, /# unsaved ✓/, seen);
    assert.match(seen, /# end/, seen);
    // The edit went to the client, byte for byte: only the replaced text differs.
    const after = "def add(a, b):\r\n    return a + b  # saved ✓\r\n\r\n# end\r\n";
    assert.deepEqual(files.writes, [{ path: file, content: after }]);
    assert.ok(files.reads.every((p) => p === file), files.reads.join(", "));
    // The disk is untouched: the editor saves its buffer when the user says so.
    assert.equal(await Deno.readTextFile(file), DISK);
    // The diff shown is the buffer's, before and after.
    const done = updatesOf(run, "tool_call_update");
    assert.deepEqual(done.map((u) => u.status), ["completed", "completed"]);
    assert.deepEqual((done[1].content as unknown[])[0], {
      type: "diff",
      path: file,
      oldText: buffer,
      newText: after,
    });
  } finally {
    await mock.close();
  }
});

Deno.test("acp fs: a client that refuses the write fails the call with a clear error", async () => {
  await using dir = await tempDir("deft-acp-fs-refuse-");
  const file = `${dir.path}/calc.py`;
  await Deno.writeTextFile(file, DISK);
  const files: ClientFiles = {
    buffers: new Map(),
    reads: [],
    writes: [],
    refuseWrites: "the buffer is read-only",
  };
  const mock = MockLLM.start([
    chatStream(chatToolCalls([[EDIT, {
      command: "str_replace",
      path: file,
      old_str: "return a - b",
      new_str: "return a + b",
    }]])),
    chatStream(chatText("Could not edit.")),
  ]);
  try {
    const { value, code, run } = await promptWithFs(mock, dir.path, files);
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.equal(files.writes.length, 1);
    const [done] = updatesOf(run, "tool_call_update");
    assert.equal(done.status, "failed");
    const seen = toolResultSeen(mock, 0);
    assert.match(seen, /refused to write .*calc\.py/, seen);
    assert.match(seen, /the buffer is read-only/, seen);
    assert.match(seen, /not changed/, seen);
    assert.equal(await Deno.readTextFile(file), DISK);
  } finally {
    await mock.close();
  }
});

Deno.test("acp fs: a path outside the workspace is refused before any fs request", async () => {
  await using dir = await tempDir("deft-acp-fs-ws-");
  await using outside = await tempDir("deft-acp-fs-outside-");
  const away = `${outside.path}/secret.txt`;
  await Deno.writeTextFile(away, "keep\n");
  // A name inside the workspace whose real path is outside it.
  await Deno.symlink(away, `${dir.path}/link.txt`);
  const files: ClientFiles = { buffers: new Map(), reads: [], writes: [] };
  const mock = MockLLM.start([
    chatStream(chatToolCalls([[EDIT, { command: "view", path: away }]])),
    chatStream(chatToolCalls([[EDIT, {
      command: "str_replace",
      path: away,
      old_str: "keep",
      new_str: "gone",
    }]])),
    chatStream(chatToolCalls([[EDIT, {
      command: "str_replace",
      path: `${dir.path}/link.txt`,
      old_str: "keep",
      new_str: "gone",
    }]])),
    chatStream(chatText("Refused.")),
  ]);
  try {
    const { value, run } = await promptWithFs(mock, dir.path, files);
    assert.equal(value.stopReason, "end_turn", run.stderr());
    const done = updatesOf(run, "tool_call_update");
    assert.deepEqual(done.map((u) => u.status), ["failed", "failed", "failed"]);
    for (let i = 0; i < 3; i++) {
      assert.match(toolResultSeen(mock, i), /leaves the workspace/, toolResultSeen(mock, i));
    }
    assert.deepEqual(files.reads, []);
    assert.deepEqual(files.writes, []);
    assert.equal(await Deno.readTextFile(away), "keep\n");
  } finally {
    await mock.close();
  }
});

Deno.test("acp fs: an edit asked about shows the client's buffer as the diff", async () => {
  await using dir = await tempDir("deft-acp-fs-ask-");
  const file = `${dir.path}/calc.py`;
  await Deno.writeTextFile(file, DISK);
  const buffer = "def add(a, b):\n    return a - b  # unsaved\n";
  const files: ClientFiles = { buffers: new Map([[file, buffer]]), reads: [], writes: [] };
  const mock = MockLLM.start([
    chatStream(chatToolCalls([[EDIT, {
      command: "str_replace",
      path: file,
      old_str: "return a - b",
      new_str: "return a + b",
    }]])),
    chatStream(chatText("Fixed.")),
  ]);
  try {
    const { value, run } = await promptWithFs(mock, dir.path, files, ["all", ["allow_once"]]);
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(run.permissions.length, 1);
    const after = "def add(a, b):\n    return a + b  # unsaved\n";
    assert.deepEqual((run.permissions[0].toolCall.content as unknown[])[0], {
      type: "diff",
      path: file,
      oldText: buffer,
      newText: after,
    });
    assert.deepEqual(files.writes, [{ path: file, content: after }]);
    assert.equal(await Deno.readTextFile(file), DISK);
  } finally {
    await mock.close();
  }
});
