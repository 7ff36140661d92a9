/**
 * Every call the gate sees comes back with its decision and who made it: the mode, an earlier
 * "session" or "always" answer, or the user's answer now. No process is started here: the tools'
 * host is a fake that runs nothing.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { ReplayGate } from "../../src/gate/replay.ts";
import type { Trajectory } from "../../src/trajectory/recorder.ts";
import type { ToolExecResult } from "../../src/tools/base.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { type Host, type StandInEntry, StandInTool } from "../../src/tools/stand_in.ts";

const context = { provider: "openai" as const, workspace: "/nonexistent-workspace", settings: {} };

const host: Host = {
  call: (): Promise<ToolExecResult> =>
    Promise.resolve({ output: "ran", error: null, error_code: 0 }),
  close: () => Promise.resolve(),
};

const RUN_SCRIPT: StandInEntry = {
  definition: {
    name: "run_script",
    description: "Runs a shell script.",
    parameters: [{ name: "script", type: "string", description: "The script.", required: true }],
  },
  effects: (args) => ({ kind: "command", command: String(args.script) }),
};
const READ_NOTES: StandInEntry = {
  definition: { name: "read_notes", description: "Reads the notes.", parameters: [] },
  effects: () => ({ kind: "read" }),
};

/** An executor behind a gate in `mode` whose user answers `answers` in turn, then nothing. */
function gated(mode: "never" | "commands" | "all", answers: string[]) {
  const gate = new ApprovalGate(mode, () => Promise.resolve(answers.shift() ?? null), () => {});
  const executor = new ToolExecutor([
    new StandInTool(RUN_SCRIPT, context, host),
    new StandInTool(READ_NOTES, context, host),
  ], gate);
  let id = 0;
  const script = async (command: string) =>
    (await executor.executeToolCall({
      name: "run_script",
      call_id: String(++id),
      arguments: { script: command },
    })).approval;
  const read = async () =>
    (await executor.executeToolCall({ name: "read_notes", call_id: String(++id), arguments: {} }))
      .approval;
  return { gate, script, read };
}

Deno.test("each decision records who made it: the mode, the user's answer, always, session", async () => {
  const { script, read } = gated("commands", ["y", "n use the test script", "a", "s"]);
  assert.deepEqual(await read(), {
    decision: "allow",
    decided_by: "mode",
    mode: "commands",
    asked: false,
  });
  assert.deepEqual(await script("make build"), {
    decision: "allow",
    decided_by: "user",
    mode: "commands",
    asked: true,
    answer: "yes",
  });
  assert.deepEqual(await script("rm -rf build"), {
    decision: "deny",
    decided_by: "user",
    mode: "commands",
    asked: true,
    answer: "no",
    reason: "use the test script",
  });
  assert.deepEqual(await script("npm test"), {
    decision: "allow",
    decided_by: "user",
    mode: "commands",
    asked: true,
    answer: "always",
    always: "$ npm test",
  });
  assert.deepEqual(await script("npm test -- --watch"), {
    decision: "allow",
    decided_by: "always",
    mode: "commands",
    asked: false,
    always: "$ npm test",
  });
  assert.deepEqual(await script("touch x"), {
    decision: "allow",
    decided_by: "user",
    mode: "commands",
    asked: true,
    answer: "session",
  });
  assert.deepEqual(await script("rm -rf y"), {
    decision: "allow",
    decided_by: "session",
    mode: "never",
    asked: false,
  });
});

Deno.test("a closed prompt is a no by nobody's answer; `never` is the mode's decision", async () => {
  const closed = gated("commands", []);
  assert.deepEqual(await closed.script("rm -rf build"), {
    decision: "deny",
    decided_by: "user",
    mode: "commands",
    asked: true,
    answer: "none",
    reason: "no answer (the prompt was closed or interrupted)",
  });
  const never = gated("never", []);
  assert.deepEqual(await never.script("rm -rf build"), {
    decision: "allow",
    decided_by: "mode",
    mode: "never",
    asked: false,
  });
});

Deno.test("after `session`, a mode the user sets (/approval) decides again, as the mode", async () => {
  const { gate, script } = gated("commands", ["s"]);
  await script("touch x");
  assert.equal((await script("touch y"))?.decided_by, "session");
  gate.mode = "never";
  assert.equal((await script("touch z"))?.decided_by, "mode");
});

Deno.test("a replay repeats the recorded decisions: a refused call is refused with its words", async () => {
  const refusal = "The user denied this command: not there. It did not run.";
  const recording = {
    agent_steps: [{
      tool_results: [
        { call_id: "a", name: "run_script", success: true, result: "ran", error: null },
        {
          call_id: "b",
          name: "run_script",
          success: false,
          result: null,
          error: refusal,
          approval: {
            decision: "deny",
            decided_by: "user",
            mode: "commands",
            asked: true,
            answer: "no",
            reason: "not there",
          },
        },
      ],
    }],
  } as unknown as Trajectory;
  const executor = new ToolExecutor(
    [new StandInTool(RUN_SCRIPT, context, host)],
    new ReplayGate(recording),
  );
  const run = (call_id: string) =>
    executor.executeToolCall({ name: "run_script", call_id, arguments: { script: "touch x" } });
  const allowed = await run("a");
  assert.equal(allowed.success, true);
  assert.deepEqual(allowed.approval, {
    decision: "allow",
    decided_by: "recording",
    mode: "never",
    asked: false,
  });
  const refused = await run("b");
  assert.equal(refused.error, refusal);
  assert.deepEqual(refused.approval, {
    decision: "deny",
    decided_by: "recording",
    mode: "commands",
    asked: false,
    reason: "not there",
  });
});
