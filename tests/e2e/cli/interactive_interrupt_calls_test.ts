/**
 * Ctrl-C during the first of several tool calls stops the turn there: the calls not yet started
 * never run, each is answered "Not run" (so the conversation stays valid), and the next turn
 * works (issue 53's loop gap: the loop once ran calls 2 and 3 after the interrupt).
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { sessionHome } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

// deno-lint-ignore no-explicit-any
type Message = any;

Deno.test("interactive (pty): Ctrl-C during call 1 of 3 leaves calls 2 and 3 unrun, every call answered", async () => {
  const repo = await makeBuggyRepo();
  const { home, env } = await sessionHome();
  const mock = MockLLM.start([], (req) => {
    const last = req.body.messages.at(-1);
    if (last.role === "user" && String(last.content).includes("three calls")) {
      return chatToolCalls([
        ["bash", { command: "sleep 5; echo slept" }],
        ["bash", { command: `touch ${repo}/a` }],
        ["bash", { command: `touch ${repo}/b` }],
      ]);
    }
    return chatText("Next turn answered.");
  });
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "three calls" + ENTER },
      // The first call is running once its command is on the screen; then Ctrl-C.
      { expect: "sleep 5", delay: 1, send: "\x03" },
      { expect: "interrupted[\\s\\S]*deft> ", send: "next" + ENTER },
      { expect: "Next turn answered\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: home, env, timeoutSeconds: 120 });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // Wait past the first call's own end: a call that ran late would have made its file by now.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const name of ["a", "b"]) {
      assert.equal(
        await Deno.stat(`${repo}/${name}`).then(() => true, () => false),
        false,
        `${name} must not exist: its call came after the interrupt\n${out}`,
      );
    }
    // The next turn's request answers every call id of the interrupted step.
    const messages: Message[] = mock.requests.at(-1)!.body.messages;
    assert.equal(messages.at(-1).content, "next");
    const asked = messages.find((m) => m.tool_calls?.length === 3);
    assert.ok(asked, "the interrupted step's calls are in the conversation");
    const answers = messages.filter((m) => m.role === "tool");
    assert.deepEqual(
      answers.map((m) => m.tool_call_id),
      asked.tool_calls.map((c: Message) => c.id),
      "every call id is answered, in order",
    );
    for (const unrun of answers.slice(1)) {
      assert.match(String(unrun.content), /Not run: the turn was interrupted/);
    }
    // The trajectory records the interrupted step with its three answers.
    const path = out.match(/trajectory: (\S+\.json)/)?.[1];
    assert.ok(path, out);
    const trajectory = JSON.parse(await Deno.readTextFile(path));
    const step = trajectory.agent_steps.find((s: Message) => s.tool_calls?.length === 3);
    assert.deepEqual(
      step.tool_results.map((t: Message) => t.error?.startsWith("Not run:") ?? false),
      [false, true, true],
    );
  } finally {
    await mock.close();
  }
});
