/**
 * The gate of a replay (`deft run --replay`): the recording's decisions again, asking nobody. A
 * call the recording refused is refused with the same words, so the replay follows the same
 * path; a reader that ran unasked runs unasked again; any other call runs.
 */
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { Tool } from "../tools/base.ts";
import {
  type CallGate,
  type GateDecision,
  type GateVerdict,
  RUN_UNASKED,
  type ToolCall,
} from "../tools/executor.ts";
import type { RecordedToolResult, Trajectory } from "../trajectory/recorder.ts";
import { canRunUnasked } from "./commands.ts";

/** The recording's decision for each call, by call id. */
export class ReplayGate implements CallGate {
  readonly #recorded = new Map<string, RecordedToolResult>();

  constructor(recording: Trajectory) {
    for (const step of recording.agent_steps) {
      for (const r of step.tool_results ?? []) this.#recorded.set(r.call_id, r);
    }
  }

  async check(tool: Tool, args: Record<string, unknown>, call?: ToolCall): Promise<GateVerdict> {
    return (await this.decide(tool, args, call)).verdict;
  }

  decide(_tool: Tool, _args: Record<string, unknown>, call?: ToolCall): Promise<GateDecision> {
    const recorded = call ? this.#recorded.get(call.call_id) : undefined;
    const approval = recorded?.approval;
    const decision: ApprovalDecision = {
      decision: approval?.decision === "deny" ? "deny" : "allow",
      decided_by: "recording",
      mode: approval?.mode ?? "never",
      asked: false,
      ...(approval?.unasked ? { unasked: true as const } : {}),
      ...(approval?.reason ? { reason: approval.reason } : {}),
    };
    const verdict = approval?.decision === "deny"
      ? recorded?.error ?? "The user denied this call when it was recorded. It did not run."
      : approval?.unasked && canRunUnasked()
      ? RUN_UNASKED
      : null;
    return Promise.resolve({ verdict, decision });
  }
}
