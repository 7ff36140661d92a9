/**
 * `!command` in `deft interactive` whose PreToolUse hook rewrites it (src/cli/interactive/
 * shell_line.ts): the rewrite runs, and both the screen and the context the model receives name
 * the command that ran, not the one typed. A real pseudo-terminal, a real hook, the mock model.
 */
import assert from "node:assert/strict";
import { chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { interactiveInPty, plain } from "../../helpers/pty.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { trustedHomeWith } from "../../helpers/deft.ts";

const ENTER = "\r";
const CTRL_D = "\x04";

const REWRITE = `#!/bin/bash
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten-by-hook"}}}'
`;

// deno-lint-ignore no-explicit-any
function lastUser(body: any): string {
  // deno-lint-ignore no-explicit-any
  return body.messages.filter((m: any) => m.role === "user").at(-1).content;
}

Deno.test("interactive (pty): a !command a hook rewrote is shown and sent to the model as it ran", async () => {
  const home = await trustedHomeWith(
    "deft-shell-hook-",
    (home) =>
      `hooks:\n  PreToolUse:\n    - matcher: "^bash$"\n      hooks:\n` +
      `        - { type: command, command: "bash ${home}/rewrite.sh" }\n`,
    { "rewrite.sh": REWRITE },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("Seen.")]);
  try {
    const r = await interactiveInPty(repo, mock, [
      { expect: "deft> ", send: "!echo typed-line" + ENTER },
      { expect: "exit code 0[\\s\\S]*deft> ", send: "what did it print?" + ENTER, delay: 0.3 },
      { expect: "Seen\\.[\\s\\S]*deft> ", send: CTRL_D, delay: 0.5 },
      { expect: "bye" },
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out, /a hook changed the command; it ran: \$ echo rewritten-by-hook/);
    assert.equal(mock.requests.length, 1);
    const prompt = lastUser(mock.requests[0].body);
    assert.match(
      prompt,
      /<user-shell-command>[\s\S]*\n\$ echo rewritten-by-hook\nrewritten-by-hook\n[\s\S]*<\/user-shell-command>/,
    );
    assert.doesNotMatch(prompt, /\$ echo typed-line/);
  } finally {
    await mock.close();
  }
});
