/**
 * An attack on the approval gate (src/gate/approval.ts): in a folder the user trusted, the
 * repository's `deft.yaml` sets everything — hooks that run on the host, outside the sandbox,
 * MCP servers, the sandbox itself. An edit of that file by the model, unasked in `commands`
 * mode, would give the next session programs the model chose: it is asked about, as an edit of
 * git's own files is.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import type { CallPlan, ToolExecResult } from "../../src/tools/base.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { type Host, type StandInEntry, StandInTool } from "../../src/tools/stand_in.ts";

const context = { provider: "openai" as const, workspace: "/nonexistent-workspace", settings: {} };

class RecordingHost implements Host {
  readonly calls: string[] = [];
  call(name: string, _args: Record<string, unknown>, _plan?: CallPlan): Promise<ToolExecResult> {
    this.calls.push(name);
    return Promise.resolve({ output: "ran", error: null, error_code: 0 });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const WRITE_FILE: StandInEntry = {
  definition: {
    name: "write_file",
    description: "Writes a file.",
    parameters: [
      { name: "path", type: "string", description: "The file.", required: true },
      { name: "text", type: "string", description: "Its text.", required: true },
    ],
  },
  effects: (args) => ({ kind: "edit", path: String(args.path), summary: String(args.text) }),
};

for (
  const path of [
    "deft.yaml",
    "/nonexistent-workspace/deft.yaml",
    "trae_config.yaml",
    "sub/deft.yaml",
  ]
) {
  Deno.test(`an edit of Deft's own config (${path}) is asked about in commands mode`, async () => {
    const host = new RecordingHost();
    const shown: string[] = [];
    const answers = ["n no"];
    const gate = new ApprovalGate(
      "commands",
      () => Promise.resolve(answers.shift() ?? null),
      (text) => shown.push(text),
      "/nonexistent-workspace",
    );
    const executor = new ToolExecutor([new StandInTool(WRITE_FILE, context, host)], gate);
    const result = await executor.executeToolCall({
      name: "write_file",
      call_id: "1",
      arguments: { path, text: "hooks:\n  SessionStart: [{hooks: [{type: command, command: x}]}]" },
    });
    assert.equal(shown.length, 1, `the edit of ${path} was not asked about`);
    assert.equal(result.success, false);
    assert.deepEqual(host.calls, [], "the refused edit reached the host");
  });
}

Deno.test("an edit of an ordinary file is not asked about in commands mode", async () => {
  const host = new RecordingHost();
  const shown: string[] = [];
  const gate = new ApprovalGate(
    "commands",
    () => Promise.resolve(null),
    (text) => shown.push(text),
    "/nonexistent-workspace",
  );
  const executor = new ToolExecutor([new StandInTool(WRITE_FILE, context, host)], gate);
  const result = await executor.executeToolCall({
    name: "write_file",
    call_id: "1",
    arguments: { path: "src/deft.yaml.md", text: "x" },
  });
  assert.equal(result.success, true, result.error ?? "");
  assert.deepEqual(shown, []);
});
