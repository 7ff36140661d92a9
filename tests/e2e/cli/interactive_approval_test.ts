/**
 * `deft interactive` on a real pseudo-terminal: approvals own the screen (the spinner stops, the
 * edit is shown as a diff with context, "session" stops asking), prompts typed during a turn are
 * queued and sent after it, and a command's name without its slash is not sent to the model.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { createTools } from "../../../src/tools/registry.ts";
import { tempDir } from "../../helpers/temp.ts";
import { sessionHome as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

Deno.test("interactive (pty): the approval owns the screen; an edit is asked with its diff in context; session stops asking", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatStream(
      chatToolCalls([["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${repo}/calc.py`,
        old_str: "return a - b",
        new_str: "return a + b",
      }]], "Fixing the sign."),
    ),
    chatToolCalls([["bash", { command: "touch a1" }]]),
    chatToolCalls([["bash", { command: "touch b1" }]]),
    chatText("Done."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "/approval all" + ENTER },
      { expect: "approval: all[\\s\\S]*deft> ", send: "fix it" + ENTER },
      // A second at the prompt: a spinner still running would redraw the line ten times.
      { expect: "Approve this edit\\?[\\s\\S]*approve> ", send: "y" + ENTER, delay: 1 },
      { expect: "\\$ touch a1[\\s\\S]*approve> ", send: "s" + ENTER },
      { expect: "Done\\.[\\s\\S]*deft> ", send: "/approval" + ENTER },
      { expect: "approval: never[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Nothing drawn between the prompt and the answer (readline only places the cursor).
    // deno-lint-ignore no-control-regex
    const echoed = /approve> (\x1b\[\d+G)?y\r+\n/;
    assert.match(r.output, echoed);
    // The edit as it would change the file: header, hunk, the unchanged line around it.
    assert.match(
      out,
      /Approve this edit\?\n--- \S+calc\.py\n\+\+\+ \S+calc\.py\n@@ -1,2 \+1,2 @@\n def add\(a, b\):\n- {4}return a - b\n\+ {4}return a \+ b\n/,
    );
    assert.match(out, /→ yes\n/);
    assert.match(out, /→ yes, and to every call for the rest of the session \(approval: never\)/);
    assert.equal(out.match(/Approve this/g)?.length, 2, "touch b1 ran unasked");
    await Deno.stat(`${repo}/b1`);
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), "def add(a, b):\n    return a + b\n");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): a prompt typed during a turn is queued and sent after it; a bare command name is not sent", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    { ...chatText("First answer."), delayMs: 2000 },
    chatText("Second answer."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "first prompt" + ENTER },
      { expect: "waiting for the model", send: "second prompt" + ENTER },
      { expect: "queued: second prompt" },
      { expect: "Second answer\\.[\\s\\S]*deft> ", send: "clear" + ENTER },
      { expect: "did you mean /clear\\?[\\s\\S]*deft> ", send: "Help" + ENTER },
      { expect: "did you mean /help\\?[\\s\\S]*deft> ", send: "exit" + ENTER },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.equal(mock.requests.length, 2, "clear and Help never reach the model");
    assert.equal(mock.requests[1].body.messages.at(-1).content, "second prompt");
    // The queued prompt was sent only after the first answer.
    assert.ok(out.indexOf("First answer.") < out.indexOf("Second answer."), out);
    assert.match(out, /Nothing was sent to the model/);
    assert.match(
      out,
      /First answer\.\n✓ completed[^\n]*\ndeft> second prompt\n/,
      "shown when sent",
    );
  } finally {
    await mock.close();
  }
});

Deno.test("an edit's question: the diff in context, a key in the context masked, escapes spelled out; no diff when the edit would not apply", async () => {
  await using dirTemp = await tempDir();
  const dir = dirTemp.path;
  await Deno.writeTextFile(
    `${dir}/settings.py`,
    'API_KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"\nDEBUG = False\nNAME = "x"\n',
  );
  const [editor] = createTools({ provider: "openai", workspace: dir, settings: {} }, [
    "str_replace_based_edit_tool",
  ]);
  const shown: string[] = [];
  const gate = new ApprovalGate("all", () => Promise.resolve("n"), (t) => shown.push(t), dir);
  try {
    await gate.check(editor, {
      command: "str_replace",
      path: "settings.py",
      old_str: "DEBUG = False",
      new_str: "DEBUG = True\x1b[2K",
    });
    assert.match(
      shown[0],
      /--- settings\.py\n\+\+\+ settings\.py\n@@ -1,3 \+1,3 @@\n API_KEY = "\*\*\*"\n-DEBUG = False\n\+DEBUG = True\\x1b\[2K\n NAME = "x"/,
    );
    assert.doesNotMatch(shown[0], /sk-ant-api03/);
    // old_str not in the file: the request as written (the editor will refuse it).
    await gate.check(editor, {
      command: "str_replace",
      path: "settings.py",
      old_str: "NOT THERE",
      new_str: "y",
    });
    assert.match(shown[1], /--- settings\.py\n\+\+\+ settings\.py\n-NOT THERE\n\+y/);
  } finally {
    await editor.close();
  }
});

Deno.test("interactive (pty): a line typed ahead never answers an approval; Ctrl-C drops the queue", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    { ...chatToolCalls([["bash", { command: "touch asked" }]]), delayMs: 1500 },
    { ...chatText("never sent"), delayMs: 6000 },
    chatText("After."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "go" + ENTER },
      // Typed while the model thinks: queued, and the question that follows must not take it.
      { expect: "waiting for the model", send: "y" + ENTER },
      { expect: "queued: y" },
      { expect: "\\$ touch asked[\\s\\S]*approve> ", send: "n" + ENTER, delay: 0.5 },
      { expect: "→ no" },
      { expect: "waiting for the model", send: "\x03" },
      { expect: "interrupted: stopping the turn \\(1 queued prompt\\(s\\) dropped\\)" },
      { expect: "deft> ", send: "next" + ENTER },
      { expect: "After\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    await assert.rejects(Deno.stat(`${repo}/asked`), Deno.errors.NotFound);
    // The queued "y" was dropped with the turn, never sent as a prompt.
    assert.equal(mock.requests.at(-1)!.body.messages.at(-1).content, "next");
    assert.ok(
      !mock.requests.some((q) => q.body.messages.at(-1).content === "y"),
      "the queued line was never sent",
    );
  } finally {
    await mock.close();
  }
});
