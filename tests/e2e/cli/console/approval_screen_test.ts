/**
 * `deft run --approval commands` on a real pseudo-terminal: the question owns the screen. The
 * spinner stops while asking (nothing is drawn over `approve>`), the typed answer stays visible,
 * the decision is shown, and "always" does not ask again.
 */
import assert from "node:assert/strict";
import { chatStream, chatToolCalls, MockLLM } from "../../../helpers/mock_llm.ts";
import { plain, runDeftInPty } from "../../../helpers/pty.ts";
import { makeBuggyRepo } from "../../../helpers/repo.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { mockModelArgs } from "../../../helpers/mock_session.ts";

const ENTER = "\r";

Deno.test("run (pty): approve> is not drawn over while waiting; the answer is echoed; always stops asking", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: "touch made_1" }]], "Making the files.")),
    chatToolCalls([["bash", { command: "touch made_2" }]]),
    chatToolCalls([["bash", { command: "mkdir \x1b[2Kdir" }]]),
    chatToolCalls([["task_done", {}]], "Done."),
  ]);
  try {
    const r = await runDeftInPty([
      "run",
      "make files",
      "-w",
      repo,
      "--approval",
      "commands",
      ...mockModelArgs(mock),
    ], [
      // Wait a second at the prompt: a spinner still running would redraw the line ten times.
      { expect: "\\$ touch made_1[\\s\\S]*approve> ", send: "a" + ENTER, delay: 1 },
      { expect: "always> ", send: "s" + ENTER },
      { expect: "\\$ mkdir [\\s\\S]*approve> ", send: "n not that one" + ENTER, delay: 0.5 },
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Nothing between the prompt and the echoed answer: no spinner frame, no erased line.
    // (readline only moves the cursor to after the prompt before echoing.)
    // deno-lint-ignore no-control-regex
    assert.match(r.output, /approve> (\x1b\[\d+G)?a\r+\n/, JSON.stringify(r.output));
    // deno-lint-ignore no-control-regex
    assert.match(r.output, /approve> (\x1b\[\d+G)?n not that one\r+\n/);
    assert.match(out, /→ yes, and to `touch` commands for the rest of the session/);
    assert.match(out, /→ no; the model is told: not that one/);
    assert.equal(out.match(/Approve this command\?/g)?.length, 2, "touch made_2 was not asked");
    // The question spells out the escape the command holds.
    assert.match(out, /\$ mkdir \\x1b\[2Kdir/);
    // The spinner came back after the answer (the command ran under it).
    assert.match(out.slice(out.indexOf("→ yes")), /running bash/);
    await Deno.stat(`${repo}/made_1`);
    await Deno.stat(`${repo}/made_2`);
    const refusal = mock.requests[3].body.messages.at(-1);
    assert.match(refusal.content, /denied this command: not that one/);
  } finally {
    await mock.close();
  }
});
