/**
 * `deft interactive` on a real pseudo-terminal against the streaming mock model: the live console
 * of `deft run` (spinner, streamed words, tool lines, diffs, a failure's last lines), per-turn time
 * and tokens, and the header once.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { sessionHome as home } from "../../helpers/mock_session.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

/** What stays on screen: spinner frames are drawn over and erased. */
function screen(output: string): string {
  // deno-lint-ignore no-control-regex
  const frames = /\r\x1b\[2K[\u2800-\u28ff][^\r\n]*/g;
  // deno-lint-ignore no-control-regex
  return plain(output.replace(frames, "").replace(/\r\x1b\[2K/g, ""));
}

Deno.test("interactive (pty): the live console: spinner, streamed words, tools, a failure's last lines, a diff, per-turn figures", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    {
      ...chatStream(
        chatToolCalls(
          [["bash", { command: `cd ${repo} && seq 1 30 && python3 check.py` }]],
          "First I run the check to see how it fails.",
        ),
        150,
      ),
      delayMs: 1500,
    },
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]])),
    chatStream(chatText("Fixed: add now adds."), 50),
    chatText("You are welcome."),
  ]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "fix add" + ENTER },
      { expect: "Fixed: add now adds\\.[\\s\\S]*deft> ", send: "thanks" + ENTER },
      { expect: "You are welcome\\.[\\s\\S]*deft> ", send: CTRL_D },
      { expect: "bye" },
    ], { args: ["--approval", "never"], cwd: h, env });
    const out = plain(r.output);
    const shown = screen(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(r.code, 0, out);
    // The spinner with its clock while the model takes 1.5 s.
    assert.match(out, /⠋ step 1 · waiting for the model · 0\.0 s/);
    assert.match(out, /waiting for the model · 1\.\d s/);
    // The model's words although it called a tool, then the call and its failure's last lines.
    assert.match(shown, /First I run the check to see how it fails\.\n● bash cd \S+ && seq 1 30/);
    assert.match(shown, /✗ failed \(exit 1\)\n\s+│ … \d+ line\(s\) above\n/);
    assert.match(shown, /│ AssertionError: add is broken\n/, "the error's own line is shown");
    assert.doesNotMatch(shown, /│ 1\n/, "the first lines are folded");
    // The edit as a diff.
    assert.match(shown, /calc\.py\n\s+@@ .* @@.*\n\s+ def add\(a, b\):\n\s+- {4}return a - b\n/);
    // Per turn: this turn's steps, seconds and tokens (three streamed replies: 300; then one: 60).
    const first = /✓ completed in 3 step\(s\), (\d+\.\d) s, 300 tokens/.exec(shown);
    const second = /✓ completed in 1 step\(s\), (\d+\.\d) s, 60 tokens/.exec(shown);
    assert.ok(first && second, shown);
    // The second turn's own time, not the conversation's so far (which would include the
    // first turn's 1.5 s wait for the model): less, on any machine load.
    assert.ok(Number(second[1]) < Number(first[1]), `${second[0]} after ${first[0]}`);
    // The header once for the conversation; no per-turn "trajectory saved".
    assert.equal(out.match(/deft running openai_compatible\/mock/g)?.length, 1, out);
    assert.equal(out.match(/trajectory: /g)?.length, 1, out);
    assert.doesNotMatch(out, /trajectory saved/);
    // The answer once, after the tool lines, as it streamed.
    assert.equal(out.match(/Fixed: add now adds\./g)?.length, 1, out);
    assert.ok(shown.indexOf("Fixed: add now adds.") > shown.indexOf("return a + b"));
    assert.equal(out.match(/You are welcome\./g)?.length, 1, out);
  } finally {
    await mock.close();
  }
});
