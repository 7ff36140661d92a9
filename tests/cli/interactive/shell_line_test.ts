/**
 * Promises of `!command` (src/cli/interactive/shell_line.ts), each with the test that guards it:
 * - when a PreToolUse hook rewrote the typed command, the context the model gets and the text
 *   shown name the command that ran, not the typed one: "a !command a hook rewrote …"
 * No process is started: the executor is a stand-in that answers as the gate pipeline does.
 */
import assert from "node:assert/strict";
import { runShellLine } from "../../../src/cli/interactive/shell_line.ts";
import type { ToolExecutor } from "../../../src/tools/executor.ts";

/** An executor whose bash call was rewritten by a hook into `ran`, and printed `output`. */
function rewritingExecutor(ran: string | undefined, output: string) {
  const calls: unknown[] = [];
  const executor = {
    find: (name: string) => name === "bash" ? { name: "bash" } : undefined,
    executeToolCall: (call: { arguments: Record<string, unknown> }) => {
      calls.push(call.arguments);
      return Promise.resolve({
        name: "bash",
        call_id: "user-shell-1",
        success: true,
        output,
        error: null,
        error_code: 0,
        approval: {
          decision: "allow",
          decided_by: ran === undefined ? "mode" : "hook",
          mode: "commands",
          asked: false,
          ...(ran === undefined ? {} : { updated_input: { command: ran } }),
        },
      });
    },
  } as unknown as ToolExecutor;
  return { executor, calls };
}

Deno.test("a !command a hook rewrote: the context and the shown text name what ran", async () => {
  const { executor, calls } = rewritingExecutor("ls -la --color=never", "total 0");
  const outcome = await runShellLine(executor, "ls");
  assert.deepEqual(calls, [{ command: "ls" }]);
  assert.match(outcome.context, /\n\$ ls -la --color=never\ntotal 0\n/);
  assert.doesNotMatch(outcome.context, /\n\$ ls\n/);
  assert.match(outcome.shown, /ran: \$ ls -la --color=never/);
  assert.equal(outcome.command, "ls -la --color=never");
});

Deno.test("a !command no hook changed: the context names the typed command", async () => {
  const { executor } = rewritingExecutor(undefined, "a.txt");
  const outcome = await runShellLine(executor, "ls");
  assert.match(outcome.context, /\n\$ ls\na\.txt\n/);
  assert.doesNotMatch(outcome.shown, /hook/);
  assert.equal(outcome.command, "ls");
});
