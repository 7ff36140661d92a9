/**
 * The ACP console's background calls (src/acp/background.ts) on the tools' own answers: kill_shell
 * closes the start's call as completed, a shell that had exited before the kill keeps its
 * outcome, and a read of a shell this session did not start, or an answer of another shape,
 * changes nothing.
 */
import assert from "node:assert/strict";
import { BackgroundCalls } from "../../src/acp/background.ts";
import type { ToolCallResult } from "../../src/tools/executor.ts";

const ID = "bg-0123456789abcdef01234567";

function result(name: string, output: string, success = true): ToolCallResult {
  return { name, call_id: "x", success, output, error: null, error_code: success ? 0 : -1 };
}

function started(calls: BackgroundCalls, callId = "c1", id = ID): void {
  const own = calls.finished(
    { call_id: callId, name: "bash", arguments: { command: "serve", run_in_background: true } },
    result("bash", `shell_id: ${id}\nStarted in the background in /w.`),
  );
  assert.deepEqual(own, { own: "in_progress" });
}

Deno.test("acp background calls: kill_shell closes the start's call as completed", () => {
  const calls = new BackgroundCalls();
  started(calls);
  const read = calls.finished(
    { call_id: "c2", name: "bash_output", arguments: { shell_id: ID } },
    result("bash_output", `shell_id: ${ID}\nstatus: running\nnew output:\nlistening\n`),
  );
  assert.equal(read.update?.status, "in_progress");
  assert.match(read.update!.text, /Started in the background in \/w\.\nlistening\n$/);
  const killed = calls.finished(
    { call_id: "c3", name: "kill_shell", arguments: { shell_id: ID } },
    result("kill_shell", `Killed background shell ${ID} (serve) and every process it started.`),
  );
  assert.deepEqual(
    { id: killed.update?.toolCallId, status: killed.update?.status },
    { id: "c1", status: "completed" },
  );
  assert.match(killed.update!.text, /listening\n\[stopped with kill_shell\]\n$/);
});

Deno.test("acp background calls: a shell that exited before kill_shell keeps its outcome", () => {
  const calls = new BackgroundCalls();
  started(calls);
  const killed = calls.finished(
    { call_id: "c2", name: "kill_shell", arguments: { shell_id: ID } },
    result(
      "kill_shell",
      `Background shell ${ID} had already exited (exit code 2); anything it left running was ` +
        "stopped.",
    ),
  );
  assert.equal(killed.update?.status, "failed");
});

Deno.test("acp background calls: reads of other shells, failed starts and other answers change nothing", () => {
  const calls = new BackgroundCalls();
  started(calls);
  const other = "bg-ffffffffffffffffffffffff";
  assert.deepEqual(
    calls.finished(
      { call_id: "c2", name: "bash_output", arguments: { shell_id: other } },
      result("bash_output", `shell_id: ${other}\nstatus: killed\n(no new output)`),
    ),
    {},
  );
  assert.deepEqual(
    calls.finished(
      { call_id: "c3", name: "bash_output", arguments: { shell_id: ID } },
      result("bash_output", "No background shell with id …", false),
    ),
    {},
  );
  assert.deepEqual(
    calls.finished(
      { call_id: "c4", name: "bash", arguments: { command: "x", run_in_background: true } },
      result("bash", "The background shell could not be started.", false),
    ),
    {},
  );
  // The start's call is still open: the next read of it still updates it.
  const read = calls.finished(
    { call_id: "c5", name: "bash_output", arguments: { shell_id: ID } },
    result("bash_output", `shell_id: ${ID}\nstatus: exited (exit code 0)\n(no new output)`),
  );
  assert.deepEqual(
    { id: read.update?.toolCallId, status: read.update?.status },
    { id: "c1", status: "completed" },
  );
});
