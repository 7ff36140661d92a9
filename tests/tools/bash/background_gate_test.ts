/**
 * The approval gate sees a background bash call like any bash call, except that it never lets
 * one run unasked: a read-only command runs unasked only in a fresh read-only sandbox, and a
 * background shell runs in the session's own shell. Reading and killing background shells are
 * not asked about. The tool refuses a background call that arrives marked unasked anyway.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../../src/gate/approval.ts";
import { canRunUnasked } from "../../../src/gate/commands.ts";
import type { CallPlan, ToolExecResult } from "../../../src/tools/base.ts";
import { BashTool } from "../../../src/tools/bash/tool.ts";
import { entryOf } from "../../../src/tools/catalog.ts";
import { RUN_UNASKED } from "../../../src/tools/executor.ts";
import { type Host, StandInTool } from "../../../src/tools/stand_in.ts";
import { tempDir } from "../../helpers/temp.ts";

const context = { provider: "openai" as const, workspace: "/nonexistent-workspace", settings: {} };

class RecordingHost implements Host {
  readonly calls: { name: string; args: Record<string, unknown>; plan?: CallPlan }[] = [];
  call(name: string, args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    this.calls.push({ name, args, plan });
    return Promise.resolve({ output: "ran", error: null, error_code: 0 });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

Deno.test("gate: a background read-only command is asked about; bash_output and kill_shell are not", async () => {
  const shown: string[] = [];
  const gate = new ApprovalGate(
    "commands",
    () => Promise.resolve("n"),
    (text) => shown.push(text),
  );
  const tool = (name: string) => new StandInTool(entryOf(name), context, new RecordingHost());
  const bash = tool("bash");
  if (canRunUnasked()) {
    const front = await gate.check(bash, { command: "cat README.md" });
    assert.equal(front, RUN_UNASKED, "unasked in the foreground");
    assert.equal(shown.length, 0);
  }
  const verdict = await gate.check(bash, { command: "cat README.md", run_in_background: true });
  assert.match(String(verdict), /denied/);
  assert.equal(shown.length, 1, "the user was asked");
  assert.match(shown[0], /cat README\.md/);
  assert.equal(await gate.check(tool("bash_output"), { shell_id: "bg-1", filter: "x" }), null);
  assert.equal(await gate.check(tool("kill_shell"), { shell_id: "bg-1" }), null);
  assert.equal(shown.length, 1);
});

Deno.test("gate: the bash tool refuses a background call marked unasked, and starts nothing", async () => {
  await using workspace = await tempDir("deft-bg-gate-");
  const bash = new BashTool({ provider: "openai", workspace: workspace.path, settings: {} });
  try {
    const r = await bash.execute(
      { command: `touch ${workspace.path}/ran`, run_in_background: true },
      { unasked: true },
    );
    assert.notEqual(r.error_code, 0);
    assert.match(r.error!, /cannot run unasked/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await assert.rejects(() => Deno.stat(`${workspace.path}/ran`), Deno.errors.NotFound);
  } finally {
    await bash.close();
  }
});
