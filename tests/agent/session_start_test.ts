/**
 * The start work a session leaves for after its prompt (src/agent/session_start.ts): begun once,
 * by whoever asks first, and every tool call waits for it at the gate.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { StartWork } from "../../src/agent/session_start.ts";
import { gatedExecutor } from "../../src/gate/pipeline.ts";
import { ok } from "../../src/tools/base.ts";
import { FakeTool } from "../helpers/tools.ts";

function recorder(events: string[]): FakeTool {
  return new FakeTool("bash", [{ name: "command", type: "string", description: "c" }], (a) => {
    events.push(`ran ${a.command}`);
    return ok("ran");
  });
}

function gate(): ApprovalGate {
  return new ApprovalGate("never", () => Promise.resolve(null), () => {}, "/w", false);
}

Deno.test("start work: a tool call waits for the start work (and begins it), then runs; the work runs once", async () => {
  const events: string[] = [];
  let finish!: () => void;
  let begun = 0;
  const start = new StartWork(() => {
    begun++;
    events.push("start begun");
    return new Promise<void>((resolve) => finish = resolve).then(() => {
      events.push("start done");
    });
  });
  const executor = gatedExecutor([recorder(events)], { approval: gate(), start });
  const call = executor.executeToolCall({
    name: "bash",
    call_id: "1",
    arguments: { command: "echo" },
  });
  // Long enough for a call that did not wait to have run.
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(events, ["start begun"], "the call has not run before the start is done");
  finish();
  const result = await call;
  assert.equal(result.success, true);
  assert.deepEqual(events, ["start begun", "start done", "ran echo"]);
  await executor.executeToolCall({ name: "bash", call_id: "2", arguments: { command: "ls" } });
  assert.equal(begun, 1, "the start work runs once");
});

Deno.test("start work: a start that failed runs no call and says why", async () => {
  const events: string[] = [];
  const start = new StartWork(() => Promise.reject(new Error("bubblewrap is gone")));
  const executor = gatedExecutor([recorder(events)], { approval: gate(), start });
  await assert.rejects(
    executor.executeToolCall({ name: "bash", call_id: "1", arguments: { command: "rm -rf x" } }),
    /bubblewrap is gone/,
  );
  assert.deepEqual(events, []);
  await start.settled(); // told where it was met: settling does not throw again
});
