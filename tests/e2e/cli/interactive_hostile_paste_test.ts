/**
 * Attacks on the composer of `deft interactive` through a real pseudo-terminal: text pasted from
 * a hostile page or file carries terminal escapes (a window-title change, a screen clear, a
 * hidden-text colour). What the terminal is sent back must be inert; what the model gets is the
 * paste exactly.
 */
import assert from "node:assert/strict";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

function paste(text: string): string {
  return `\x1b[200~${text}\x1b[201~`;
}

Deno.test("interactive (pty): a one-line paste holding terminal escapes is never echoed raw; the model gets it exactly", async () => {
  const repo = await makeBuggyRepo();
  const dir = await tempDirUntilExit("deft-home-");
  const env = { HOME: dir, XDG_STATE_HOME: `${dir}/state` };
  // OSC 0 (set the window title) and an erase-display: a terminal obeys both when echoed raw.
  const hostile = "fix \x1b]0;PWNED-TITLE\x07this\x1b[2J now";
  const mock = MockLLM.start([chatText("Done.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: paste(hostile) },
      { expect: "\\[pasted", send: ENTER, delay: 0.5 },
      { expect: "Done\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: dir, env, timeoutSeconds: 60 });
    assert.equal(r.failed, null, r.output);
    assert.equal(r.code, 0, r.output);
    assert.ok(!r.output.includes("\x1b]0;PWNED"), "the title escape reached the terminal raw");
    assert.ok(!r.output.includes("\x1b[2J"), "the erase-display escape reached the terminal raw");
    assert.equal(mock.requests.length, 1);
    // deno-lint-ignore no-explicit-any
    const users = mock.requests[0].body.messages.filter((m: any) => m.role === "user");
    assert.ok(users.at(-1).content.includes(hostile), "the model gets the paste as pasted");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): an earlier input holding escapes, brought back with Up, is never drawn raw", async () => {
  const repo = await makeBuggyRepo();
  const dir = await tempDirUntilExit("deft-home-");
  const env = { HOME: dir, XDG_STATE_HOME: `${dir}/state` };
  await Deno.mkdir(`${dir}/state/deft`, { recursive: true });
  // The history file as an earlier session wrote it after such a paste.
  await Deno.writeTextFile(
    `${dir}/state/deft/history`,
    JSON.stringify("old \x1b]0;PWNED-TITLE\x07input\x1b[2J") + "\n" + JSON.stringify("plain") +
      "\n",
  );
  // No model answers at this address: the test never sends a line.
  const r = await interactiveInPty(repo, { url: "http://127.0.0.1:9" }, [
    { expect: "deft> ", send: "\x1b[A", delay: 0.3 },
    { expect: "plain", send: "\x1b[A", delay: 0.3 },
    { send: "\x15" + CTRL_D, delay: 0.5 },
    { expect: "bye" },
  ], { cwd: dir, env, timeoutSeconds: 60 });
  assert.equal(r.failed, null, r.output);
  assert.ok(!r.output.includes("\x1b]0;PWNED"), "the title escape reached the terminal raw");
  assert.ok(!r.output.includes("\x1b[2J"), "the erase-display escape reached the terminal raw");
});
