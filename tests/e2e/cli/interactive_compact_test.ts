/**
 * `/compact` in `deft interactive` (issue 52), through a real terminal: the compacted conversation
 * is recorded at once, so leaving right after it and going on with `deft -c` resumes the summary,
 * not the messages it replaced.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain, runDeftInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { mockModelArgs, sessionHome } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

Deno.test("interactive (pty): /compact then Ctrl-D; deft -c goes on from the summary", async () => {
  const repo = await makeBuggyRepo();
  const { home, env } = await sessionHome();
  const mock = MockLLM.start([
    chatText("Answer one."),
    chatText("Answer two."),
    chatText("SUMMARY-XYZ: two questions were asked and answered."),
    chatText("Going on."),
  ]);
  const model = mockModelArgs(mock);
  try {
    const first = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "first question" + ENTER },
      { expect: "Answer one\\.[\\s\\S]*deft> ", send: "second question" + ENTER },
      { expect: "Answer two\\.[\\s\\S]*deft> ", send: "/compact" + ENTER },
      { expect: "compacted the conversation: 5 → 3[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: home, env });
    assert.equal(first.failed, null, plain(first.output));

    const listed = await runDeft(["sessions", "-w", repo], { cwd: home, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /first question \(compacted: goes on from the \/compact summary\)/);

    const again = await runDeftInPty(["-c", "-w", repo, ...model], [
      { expect: "resumed session[\\s\\S]*deft> ", send: "and now?" + ENTER },
      { expect: "Going on\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: home, env });
    assert.equal(again.failed, null, plain(again.output));
    const sent = mock.requests[3].body.messages;
    assert.deepEqual(sent.map((m: { role: string }) => m.role), [
      "system",
      "user",
      "assistant",
      "user",
    ]);
    assert.match(sent[1].content, /compacted by \/compact[\s\S]*SUMMARY-XYZ/);
    assert.equal(sent[3].content, "and now?");
    assert.doesNotMatch(JSON.stringify(sent), /first question|Answer one/);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("interactive (pty): /compact right after deft -c (before its first turn) compacts the resumed conversation, recorded at once", async () => {
  const repo = await makeBuggyRepo();
  const { home, env } = await sessionHome();
  const mock = MockLLM.start([
    chatText("Answer one."),
    chatText("Answer two."),
    chatText("SUMMARY-RESUMED: two questions were asked and answered."),
    chatText("Going on."),
  ]);
  const model = mockModelArgs(mock);
  try {
    const first = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "first question" + ENTER },
      { expect: "Answer one\\.[\\s\\S]*deft> ", send: "second question" + ENTER },
      { expect: "Answer two\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: home, env });
    assert.equal(first.failed, null, plain(first.output));

    // Resumed, and compacted before anything else is asked; then left at once.
    const compacted = await runDeftInPty(["-c", "-w", repo, ...model], [
      { expect: "resumed session[\\s\\S]*deft> ", send: "/compact" + ENTER },
      { expect: "compacted the conversation: 5 → 3[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: home, env });
    assert.equal(compacted.failed, null, plain(compacted.output));
    assert.match(mock.requests[2].body.messages[1].content, /first question[\s\S]*Answer two/);

    const listed = await runDeft(["sessions", "-w", repo], { cwd: home, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /first question \(compacted: goes on from the \/compact summary\)/);

    const again = await runDeftInPty(["-c", "-w", repo, ...model], [
      { expect: "resumed session[\\s\\S]*deft> ", send: "and now?" + ENTER },
      { expect: "Going on\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { cwd: home, env });
    assert.equal(again.failed, null, plain(again.output));
    const sent = mock.requests[3].body.messages;
    assert.deepEqual(sent.map((m: { role: string }) => m.role), [
      "system",
      "user",
      "assistant",
      "user",
    ]);
    assert.match(sent[1].content, /compacted by \/compact[\s\S]*SUMMARY-RESUMED/);
    assert.equal(sent[3].content, "and now?");
    assert.doesNotMatch(JSON.stringify(sent), /first question|Answer one/);
  } finally {
    await mock.close();
    await Deno.remove(repo, { recursive: true });
  }
});
