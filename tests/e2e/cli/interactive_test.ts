import assert from "node:assert/strict";
import { interactiveOnStdin, runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { mockModelArgs as modelArgs, sessionHome as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";
const UP = "\x1b[A";

// deno-lint-ignore no-explicit-any
const userTexts = (req: any): string[] =>
  // deno-lint-ignore no-explicit-any
  req.body.messages.filter((m: any) => m.role === "user").map((m: any) => m.content);

Deno.test("interactive (pty): a conversation; text answers end turns; slash commands stay local; history survives a restart", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatText("The answer is 42."),
    chatText("Earlier I said 42."),
    chatText("Asked again."),
  ]);
  try {
    const first = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "/help" + ENTER },
      { expect: "Commands:[\\s\\S]*deft> ", send: "/bogus" + ENTER },
      { expect: "unknown command /bogus[\\s\\S]*deft> ", send: "what is the answer" + ENTER },
      { expect: "The answer is 42\\.[\\s\\S]*deft> ", send: "what did you just say" + ENTER },
      { expect: "Earlier I said 42\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(first.output);
    assert.equal(first.failed, null, out);
    assert.equal(first.code, 0, out);
    assert.equal(mock.requests.length, 2, "/help and /bogus never reach the model");
    const second = mock.requests[1].body.messages;
    assert.deepEqual(
      second.slice(1).map((m: { role: string; content: string }) => [
        m.role,
        m.content.replace(/^\[Project root[^]*\[Task\]:\n/, "").trim(),
      ]),
      [
        ["user", "what is the answer"],
        ["assistant", "The answer is 42."],
        ["user", "what did you just say"],
      ],
      "the second prompt sees the first turn",
    );
    const history = await Deno.readTextFile(`${h}/state/deft/history`);
    assert.match(history, /what did you just say/);

    // A new session: the up arrow recalls the last prompt of the previous one.
    const again = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: UP },
      { expect: "what did you just say", send: ENTER },
      { expect: "Asked again\\.[\\s\\S]*deft> ", send: "/exit" + ENTER },
      { expect: "bye" },
    ], { cwd: h, env });
    assert.equal(again.failed, null, plain(again.output));
    assert.equal(again.code, 0);
    assert.deepEqual(
      userTexts(mock.requests[2]).map((t) => t.replace(/^[^]*\[Task\]:\n/, "").trim()),
      [
        "what did you just say",
      ],
      "a new session starts a new conversation with the recalled prompt",
    );
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): approvals ask before rm -rf, not ls; no sends the reason; always stops asking; /clear empties the conversation", async () => {
  const repo = await makeBuggyRepo();
  await Deno.mkdir(`${repo}/build`);
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "ls" }]]),
    chatToolCalls([["bash", { command: "rm -rf build" }]]),
    chatToolCalls([["bash", { command: "touch made_1" }]]),
    chatToolCalls([["bash", { command: "touch made_2" }]]),
    chatText("All done."),
    chatText("Fresh start."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "approval: commands[\\s\\S]*deft> ", send: "tidy up" + ENTER },
      { expect: "Approve this command\\?\\s+\\$ rm -rf build[\\s\\S]*approve> " },
      { send: "n keep the build folder" + ENTER },
      { expect: "Approve this command\\?\\s+\\$ touch made_1[\\s\\S]*`touch` commands" },
      { expect: "approve> ", send: "a" + ENTER },
      { expect: "always> ", send: "s" + ENTER },
      { expect: "All done\\.[\\s\\S]*deft> ", send: "/clear" + ENTER },
      { expect: "new conversation[\\s\\S]*deft> ", send: "hello\\" + ENTER },
      { expect: "… ", send: "again" + ENTER },
      { expect: "Fresh start\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.equal(
      out.match(/Approve this command\?/g)?.length,
      2,
      "ls and the second touch ran unasked",
    );
    assert.equal((await Deno.stat(`${repo}/build`)).isDirectory, true, "the denied rm never ran");
    const refusal = mock.requests[2].body.messages.at(-1);
    assert.equal(refusal.role, "tool");
    assert.match(refusal.content, /denied this command: keep the build folder.*did not run/s);
    await Deno.stat(`${repo}/made_1`);
    await Deno.stat(`${repo}/made_2`);
    const afterClear = mock.requests[5].body.messages;
    assert.equal(afterClear.length, 2, "after /clear only the system prompt and the new prompt");
    assert.match(afterClear[1].content, /\[Task\]:\nhello\nagain\n/, "a trailing \\ continues");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): Ctrl-C stops the turn, not the session", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  // Replies by prompt, so it does not matter whether the first request got out before Ctrl-C.
  const mock = MockLLM.start(
    [],
    (req) =>
      req.body.messages.at(-1).content === "quick one"
        ? chatText("Quick.")
        : { ...chatText("too late"), delayMs: 6000 },
  );
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "slow one" + ENTER },
      { expect: "waiting for the model", send: "\x03" },
      { expect: "interrupted[\\s\\S]*deft> ", send: "quick one" + ENTER },
      { expect: "Quick\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    assert.doesNotMatch(out, /too late/);
    assert.equal(mock.requests.at(-1)!.body.messages.at(-1).content, "quick one");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive: /diff shows the changes, /model switches; --continue goes on with the last session", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatText("Fixed."),
    chatText("Still here."),
  ]);
  try {
    const first = await interactiveOnStdin(
      repo,
      mock,
      "/diff\nfix calc\n/diff\n/model other-model\n/nonsense\n",
      { args: ["--approval", "never"], cwd: h, env },
    );
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /\(no changes, or not a git repository\)/);
    assert.match(first.stderr, /- {4}return a - b\n\+ {4}return a \+ b/);
    assert.match(first.stderr, /model: openai_compatible\/other-model from the next turn on/);
    assert.match(first.stderr, /unknown command \/nonsense/);
    assert.equal(mock.requests.length, 2);

    const again = await runDeft(
      ["interactive", "--continue", "-w", repo, "--approval", "never", ...modelArgs(mock)],
      { cwd: h, env, stdin: "what did you fix?\n" },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /resumed session/);
    const sent = mock.requests[2].body.messages;
    assert.deepEqual(
      sent.map((m: { role: string }) => m.role),
      ["system", "user", "assistant", "tool", "assistant", "user"],
    );
    assert.equal(sent.at(-1).content, "what did you fix?");
    assert.match(again.stdout, /Still here\./);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): lines pasted at once form one prompt", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([chatText("Got both.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "first pasted line" + ENTER + "second pasted line" + ENTER },
      { expect: "Got both\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: h, env });
    assert.equal(r.failed, null, plain(r.output));
    assert.equal(mock.requests.length, 1);
    assert.match(
      mock.requests[0].body.messages[1].content,
      /\[Task\]:\nfirst pasted line\nsecond pasted line\n/,
    );
  } finally {
    await mock.close();
  }
});
