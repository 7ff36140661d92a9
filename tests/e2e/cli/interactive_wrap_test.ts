/**
 * The console at 80 columns on a real pseudo-terminal (issue 52): an approval, a diff, a tool's
 * output, the model's streamed answer and `/help` are laid out so that no word is broken across
 * two rows (the terminal would break it wherever its edge fell).
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain, runDeftInPty } from "../../helpers/pty.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";
import { brokenWords, terminalRows } from "../../helpers/terminal_rows.ts";
import { helpText } from "../../../src/cli/interactive/commands.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

// A command that writes (a reader would run unasked): the approval is asked.
const COMMAND = "touch fox.txt && echo 'the quick brown fox jumps over the lazy dog, and then " +
  "it jumps back over the sleepy cat'";
const NEW_LINE = "    return a + b  # the sum of both arguments, as the check in check.py " +
  "expects of it";
const ANSWER = "The sign in calc.py was wrong, so add subtracted its arguments; it adds " +
  "them now, and the check that tests it passes again as it should.";

/** The replies of one session: a command, an edit, the answer (streamed, in pieces). */
function replies(repo: string) {
  return [
    chatStream(chatToolCalls([["bash", { command: COMMAND }]], "Let me look first.")),
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "    return a - b",
      new_str: NEW_LINE,
    }]])),
    chatStream(chatText(ANSWER)),
  ];
}

const CHOICES = '[y]es · [n]o, with a reason for the model ("n use the test script") · ' +
  "[a]lways for `touch fox.txt` (this session or this project) · [s]ession: ask nothing " +
  "more in this session";

Deno.test("interactive (pty, 60/80/120/160 columns): approvals, diffs, output, the answer and /help never break a word at the edge", async () => {
  for (const cols of [60, 80, 120, 160]) {
    const repo = await makeBuggyRepo();
    const home = await tempDirUntilExit("deft-home-");
    const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
    const mock = MockLLM.start(replies(repo));
    try {
      const r = await interactiveInPty(repo, mock, [
        { expect: "deft> ", send: "/help" + ENTER },
        { expect: "Ctrl-D[\\s\\S]*deft> ", send: "/approval all" + ENTER },
        { expect: "approval: all[\\s\\S]*deft> ", send: "fix the sign" + ENTER },
        { expect: "Approve this command\\?[\\s\\S]*approve> ", send: "y" + ENTER },
        { expect: "Approve this edit\\?[\\s\\S]*approve> ", send: "y" + ENTER },
        { expect: "should\\.[\\s\\S]*deft> ", send: CTRL_D },
        { expect: "bye" },
      ], { cwd: home, env, size: { cols, rows: 24 } });
      assert.equal(r.failed, null, plain(r.output));
      assert.equal(r.code, 0, plain(r.output));
      const rows = terminalRows(r.output, cols);
      const shown = rows.join("\n");
      const said = [helpText(), CHOICES, COMMAND, NEW_LINE, ANSWER].join("\n");
      assert.deepEqual(brokenWords(rows, said), [], `${cols} columns:\n${shown}`);
      // The parts were all there to be checked: the question, the diff, the output, the answer.
      for (
        const part of [/Approve this command\?/, /^\+ {4}return a \+ b/m, /│ the quick/, /^The/m]
      ) {
        assert.match(shown, part, `${cols} columns`);
      }
    } finally {
      await mock.close();
    }
  }
});

Deno.test("deft run (pty, 60 columns): the approval question and its options never break a word", async () => {
  const repo = await makeBuggyRepo();
  const home = await tempDirUntilExit("deft-home-");
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  const mock = MockLLM.start(replies(repo));
  try {
    const r = await runDeftInPty(
      ["run", "fix the sign", "-w", repo, ...mockModelArgs(mock), "--approval", "all"],
      [
        { expect: "Approve this command\\?[\\s\\S]*approve> ", send: "n use make" + ENTER },
        { expect: "Approve this edit\\?[\\s\\S]*approve> ", send: "y" + ENTER },
        { expect: "completed" },
      ],
      { cwd: home, env, size: { cols: 60, rows: 24 } },
    );
    assert.equal(r.failed, null, plain(r.output));
    const rows = terminalRows(r.output, 60);
    const said = [CHOICES, COMMAND, NEW_LINE, ANSWER].join("\n");
    assert.deepEqual(brokenWords(rows, said), [], rows.join("\n"));
    assert.match(rows.join("\n"), /→ no; the model is told: use make/);
  } finally {
    await mock.close();
  }
});
