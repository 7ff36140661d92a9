/**
 * The user's own calls in `deft interactive` (`!command`, `/undo`) pass the session's gate
 * pipeline on a real pseudo-terminal: a PreToolUse deny hook and a deny rule stop them, the
 * approval mode does not ask about them (typing them was the yes), and what the gate lets
 * through still runs.
 */
import assert from "node:assert/strict";
import { trustedHomeWith } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

const ENTER = "\r";

// Refuses (exit 2, the reason on stderr) a bash call that touches `hook-blocked` and the
// editor's `undo_edit`; says nothing about anything else.
const DENY_HOOK = `#!/bin/bash
input=$(cat)
case "$input" in
  *hook-blocked*) echo "typed-deny: touching hook-blocked is not allowed here" >&2; exit 2 ;;
  *'"command":"undo_edit"'*) echo "typed-deny: undoing is not allowed here" >&2; exit 2 ;;
esac
exit 0
`;

/** A HOME whose config has the deny hook and a deny rule, and the approval flags. */
async function stage(): Promise<{ home: string; args: string[] }> {
  const home = await trustedHomeWith(
    "deft-typed-",
    (home) =>
      `hooks:\n  PreToolUse:\n    - hooks:\n        - { type: command, command: "bash ${home}/deny.sh" }\n` +
      `approvals:\n  deny: ["$ touch rule-blocked"]\n`,
    { "deny.sh": DENY_HOOK },
  );
  return { home, args: ["--approval", "commands"] };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("interactive (pty): a PreToolUse deny hook and a deny rule stop `!touch`; an allowed `!touch` runs unasked", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([]);
  try {
    const { home, args } = await stage();
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!touch hook-blocked" + ENTER },
      { expect: "not run:[\\s\\S]*deft> ", send: "!touch rule-blocked" + ENTER, delay: 0.3 },
      { expect: "not run:[\\s\\S]*deft> ", send: "!touch allowed" + ENTER },
      { expect: "exit code 0[\\s\\S]*deft> ", send: "/exit" + ENTER, delay: 0.3 },
      { expect: "bye" },
    ], {
      args,
      cwd: home,
      env: { HOME: home, XDG_STATE_HOME: `${home}/state` },
      timeoutSeconds: 60,
    });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.equal(await exists(`${repo}/hook-blocked`), false, `the hook did not stop it:\n${out}`);
    assert.equal(await exists(`${repo}/rule-blocked`), false, `the rule did not stop it:\n${out}`);
    assert.match(
      out,
      /not run: PreToolUse hook '.*deny\.sh' refused the call: typed-deny: touching hook-blocked/,
    );
    assert.match(
      out,
      /not run: the deny rule `\$ touch rule-blocked` \(set in [^)]+\) refuses it\./,
    );
    // What the gate lets through runs, and the approval mode (`commands`) did not ask: typed.
    assert.equal(await exists(`${repo}/allowed`), true, out);
    assert.doesNotMatch(out, /approve>/);
    assert.equal(mock.requests.length, 0, "no model call");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive (pty): /undo is refused by a PreToolUse deny hook; the edit stays", async () => {
  const repo = await makeBuggyRepo();
  const calc = `${repo}/calc.py`;
  const before = await Deno.readTextFile(calc);
  const line = before.split("\n").find((l) => l.trim() !== "")!;
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: calc,
      old_str: line,
      new_str: `${line}  # edited by the model`,
    }]]),
    chatText("Edited."),
  ]);
  try {
    const { home, args } = await stage();
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "edit calc.py" + ENTER },
      { expect: "Edited\\.[\\s\\S]*deft> ", send: "/undo" + ENTER, delay: 0.3 },
      { expect: "✗[\\s\\S]*deft> ", send: "/exit" + ENTER, delay: 0.3 },
      { expect: "bye" },
    ], {
      args,
      cwd: home,
      env: { HOME: home, XDG_STATE_HOME: `${home}/state` },
      timeoutSeconds: 60,
    });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(
      out,
      /✗ .*calc\.py: PreToolUse hook '.*deny\.sh' refused the call: typed-deny: undoing is not/,
    );
    assert.match(
      await Deno.readTextFile(calc),
      /# edited by the model/,
      "the hook did not stop /undo",
    );
  } finally {
    await mock.close();
  }
});
