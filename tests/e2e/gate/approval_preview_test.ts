/**
 * Issue 36, finding 11c, from the attacker's side: the model names a file outside the workspace
 * (directly, through a link, or as a container path that also exists on the host) in an edit.
 * Under `--approval all` the question previews an edit as a diff with context, and the console
 * diffs every edit; neither may put the outside file's lines on the terminal, nor wait on a FIFO.
 * The outside file is a marker under a temp folder; nothing outside it is touched.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { snapshot } from "../../../src/cli/console/edit_diff.ts";
import type { ToolExecResult } from "../../../src/tools/base.ts";
import { entryOf } from "../../../src/tools/catalog.ts";
import { type Host, StandInTool } from "../../../src/tools/stand_in.ts";
import { tempDir } from "../../helpers/temp.ts";

const MARKER = "OUTSIDE-CONTEXT-MARKER";
const SECRET = `${MARKER} line one\nvictim = 1\n${MARKER} line three\n`;

const noHost: Host = {
  call: (): Promise<ToolExecResult> => Promise.reject(new Error("the gate only asks")),
  close: () => Promise.resolve(),
};

/** A workspace and, beside it, an outside folder holding the marker file. */
async function places(root: string) {
  const workspace = `${root}/ws`;
  const outside = `${root}/outside`;
  await Deno.mkdir(workspace);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${outside}/secret.txt`, SECRET);
  await Deno.writeTextFile(`${workspace}/own.txt`, "alpha\nbeta\ngamma\n");
  await Deno.symlink(outside, `${workspace}/linked`);
  await Deno.symlink(`${outside}/secret.txt`, `${workspace}/secret-link.txt`);
  return { workspace, outside };
}

/** The question an `--approval all` gate shows for a str_replace of `path`, answered no. */
async function question(workspace: string, path: string, inContainer = false): Promise<string> {
  const shown: string[] = [];
  const gate = new ApprovalGate(
    "all",
    () => Promise.resolve("n"),
    (text) => shown.push(text),
    workspace,
    inContainer,
  );
  const editor = new StandInTool(
    entryOf("str_replace_based_edit_tool"),
    { provider: "openai", workspace, settings: {} },
    noHost,
  );
  const verdict = await gate.check(editor, {
    command: "str_replace",
    path,
    old_str: "victim = 1",
    new_str: "victim = 2",
  });
  assert.match(String(verdict), /denied this edit/);
  assert.equal(shown.length, 1);
  return shown[0];
}

Deno.test("the approval preview never shows a file outside the workspace", async () => {
  await using root = await tempDir();
  const { workspace, outside } = await places(root.path);
  for (
    const path of [
      `${outside}/secret.txt`,
      `${workspace}/../outside/secret.txt`,
      `${workspace}/linked/secret.txt`,
      `${workspace}/secret-link.txt`,
    ]
  ) {
    const shown = await question(workspace, path);
    assert.doesNotMatch(shown, new RegExp(MARKER), `${path}: the outside file's lines were shown`);
    // What the model itself asked for is still shown, so the user can judge it.
    assert.match(shown, /-victim = 1\n\+victim = 2/, path);
  }
});

Deno.test("in a container the preview does not read the host's file at the container's path", async () => {
  await using root = await tempDir();
  const { outside } = await places(root.path);
  // The container's workspace is `outside` too: on the host that path holds the marker file.
  const shown = await question(outside, `${outside}/secret.txt`, true);
  assert.doesNotMatch(shown, new RegExp(MARKER), "the host's file at the container path was read");
  assert.match(shown, /-victim = 1\n\+victim = 2/);
});

/**
 * Stands by as the FIFO's writer: should a read of it block this thread (a synchronous open
 * waits for a writer, and no timer of this thread fires then), a worker thread opens the other
 * end without ever waiting itself, writes a marker line and closes it, so the read ends and what
 * was read shows it.
 */
function fifoRescuer(fifo: string): Worker {
  const code = `
    import { closeSync, constants, openSync, writeSync } from "node:fs";
    self.onmessage = (e) => {
      const tick = () => {
        try {
          const fd = openSync(e.data, constants.O_WRONLY | constants.O_NONBLOCK);
          writeSync(fd, "FIFO-MARKER\\nvictim = 1\\n");
          closeSync(fd);
        } catch { /* no reader yet (ENXIO) */ }
        setTimeout(tick, 50);
      };
      tick();
    };`;
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module" });
  worker.postMessage(fifo);
  return worker;
}

Deno.test("a FIFO named by an edit holds neither the question nor the console", async () => {
  await using root = await tempDir();
  const { workspace } = await places(root.path);
  const fifo = `${workspace}/pipe.txt`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success);
  const rescuer = fifoRescuer(fifo);
  try {
    const shown = await question(workspace, fifo);
    assert.doesNotMatch(shown, /FIFO-MARKER/, "the preview read the FIFO");
    const call = {
      name: "str_replace_based_edit_tool",
      call_id: "1",
      arguments: { command: "str_replace", path: fifo, old_str: "a", new_str: "b" },
    };
    assert.equal(snapshot(call, workspace), undefined, "the console does not read a FIFO");
  } finally {
    rescuer.terminate();
  }
});

Deno.test("the console's diff never reads a file outside the workspace through a link", async () => {
  await using root = await tempDir();
  const { workspace } = await places(root.path);
  for (const path of [`${workspace}/linked/secret.txt`, `${workspace}/secret-link.txt`]) {
    const call = {
      name: "str_replace_based_edit_tool",
      call_id: "1",
      arguments: { command: "str_replace", path, old_str: "victim = 1", new_str: "victim = 2" },
    };
    assert.equal(snapshot(call, workspace), undefined, path);
  }
  const own = snapshot({
    name: "str_replace_based_edit_tool",
    call_id: "2",
    arguments: { command: "str_replace", path: `${workspace}/own.txt`, old_str: "b", new_str: "c" },
  }, workspace);
  assert.equal(new TextDecoder().decode(own?.before ?? undefined), "alpha\nbeta\ngamma\n");
});

Deno.test("an edit inside the workspace is still previewed with its context", async () => {
  await using root = await tempDir();
  const { workspace } = await places(root.path);
  const shown: string[] = [];
  const gate = new ApprovalGate("all", () => Promise.resolve("n"), (t) => shown.push(t), workspace);
  const editor = new StandInTool(
    entryOf("str_replace_based_edit_tool"),
    { provider: "openai", workspace, settings: {} },
    noHost,
  );
  await gate.check(editor, {
    command: "str_replace",
    path: `${workspace}/own.txt`,
    old_str: "beta",
    new_str: "BETA",
  });
  assert.match(shown[0], / alpha\n-beta\n\+BETA\n gamma/);
});

Deno.test("a huge change the model asks for is shown cut, whatever its lines", async () => {
  await using root = await tempDir();
  const { workspace } = await places(root.path);
  const editor = new StandInTool(
    entryOf("str_replace_based_edit_tool"),
    { provider: "openai", workspace, settings: {} },
    noHost,
  );
  // In a container nothing is read: the question shows the change as asked. One line of 4 MB,
  // then many short lines: neither reaches the terminal whole.
  const huge = `${"x".repeat(4_000_000)}\n${"line\n".repeat(100_000)}END-MARKER`;
  const asked: [Record<string, unknown>, RegExp][] = [
    [
      { command: "create", path: "big.txt", file_text: huge },
      /\+\+\+ big\.txt \(new file\)\n\+x{1000}…\n\+line\n/,
    ],
    [
      { command: "str_replace", path: "big.txt", old_str: huge, new_str: huge },
      /--- big\.txt\n\+\+\+ big\.txt\n-x{1000}…\n-line\n/,
    ],
    [
      { command: "insert", path: "big.txt", insert_line: 3, new_str: huge },
      /\+\+\+ big\.txt \(after line 3\)\n\+x{1000}…\n\+line\n/,
    ],
  ];
  for (const [args, head] of asked) {
    const shown: string[] = [];
    const ask = () => Promise.resolve("n");
    const gate = new ApprovalGate("all", ask, (t) => shown.push(t), workspace, true);
    await gate.check(editor, args);
    assert.equal(shown.length, 1, String(args.command));
    assert.match(shown[0], head);
    assert.doesNotMatch(shown[0], /END-MARKER/, String(args.command));
    assert.ok(shown[0].length < 20_000, `${args.command}: ${shown[0].length} characters shown`);
  }
});
