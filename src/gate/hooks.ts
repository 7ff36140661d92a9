/**
 * The hooks' steps of the pipeline: PreToolUse hooks before the rules and the mode, PostToolUse
 * hooks on each result. A hook's deny refuses the call (the model reads the reason as the call's
 * error), its allow lets the call through without asking, its ask has the approval gate ask (as
 * an ask rule does), no answer at all leaves the call to the rules and the mode, and its
 * `updatedInput` is checked against the tool's parameters again before anything runs: an invalid
 * rewrite refuses the call. Every decision a hook makes is recorded as `decided_by: "hook"` with
 * the hook's command and config file, and a rewrite's arguments beside the model's
 * (`updated_input`).
 */
import type { HookName, Hooks } from "../hooks/hooks.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { Tool } from "../tools/base.ts";
import type { GateDecision, ToolCall, ToolCallResult } from "../tools/executor.ts";
import { nestingProblem } from "../tools/nesting.ts";
import { validateArguments } from "../tools/validate.ts";
import { sentence } from "./question.ts";

/** What the PreToolUse hooks made of a call. */
export type PreToolStep =
  /** The hooks decided: refused, or let through without asking. */
  | { decided: GateDecision }
  /** The call goes on to the rules and the mode, with these arguments (a hook's rewrite). */
  | {
    args: Record<string, unknown>;
    /** A hook answered `ask`: the question is put even where the mode would not. */
    asks?: HookName;
    /** What goes into the decision's record about the hooks. */
    record: Partial<ApprovalDecision>;
  };

/** Runs the PreToolUse hooks on a validated call. `mode` names the approval mode in force. */
export async function preToolUse(
  hooks: Hooks,
  tool: Tool,
  args: Record<string, unknown>,
  call: ToolCall | undefined,
  mode: string,
): Promise<PreToolStep> {
  const said = await hooks.preToolUse(tool.name, args, call?.call_id);
  const by = said.by ? { hook: { name: said.by.name, source: said.by.source } } : {};
  const record = (decision: "allow" | "deny", reason?: string): ApprovalDecision => ({
    decision,
    decided_by: "hook",
    mode,
    asked: false,
    ...(reason ? { reason } : {}),
    ...by,
  });
  if (said.decision === "deny") {
    const reason = said.reason ?? "A PreToolUse hook refused the call";
    // Said as every refusal says it: the hook's words as a sentence, then that nothing ran.
    const verdict = `${sentence(reason)} It did not run.`;
    return { decided: { verdict, decision: record("deny", reason) } };
  }
  let runArgs = args;
  if (said.updatedInput !== undefined) {
    const problem = nestingProblem(said.updatedInput);
    const checked = problem
      ? { ok: false as const, error: problem }
      : validateArguments(tool.name, tool.parameters, said.updatedInput);
    if (!checked.ok) {
      const reason = `PreToolUse hook ${said.by?.name} rewrote the call's arguments into ` +
        `ones ${tool.name} does not accept, so the call was not run: ${checked.error}`;
      return {
        decided: {
          verdict: sentence(reason),
          decision: { ...record("deny", reason), updated_input: said.updatedInput },
        },
      };
    }
    runArgs = checked.args;
  }
  const rewritten = runArgs !== args ? { updated_input: runArgs } : {};
  if (said.decision === "allow") {
    return {
      decided: { verdict: null, decision: { ...record("allow"), ...rewritten }, args: runArgs },
    };
  }
  const asks = said.decision === "ask" ? said.by ?? { name: "a PreToolUse hook" } : undefined;
  return {
    args: runArgs,
    ...(asks ? { asks } : {}),
    record: { ...rewritten, ...(said.updatedInput !== undefined || asks ? by : {}) },
  };
}

/**
 * Runs the PostToolUse hooks on the result of a call that completed (as in Claude Code; a failed
 * one is the model's): an objection turns it into a failure, its output kept; added context goes
 * after the output.
 */
export async function postToolUse(
  hooks: Hooks,
  tool: Tool,
  args: Record<string, unknown>,
  result: ToolCallResult,
): Promise<ToolCallResult> {
  if (!result.success) return result;
  const said = await hooks.postToolUse(tool.name, args, result.output, result.call_id);
  if (!said.block && !said.context) return result;
  const notes: string[] = [];
  if (said.block) {
    notes.push(`PostToolUse hook ${said.block.by.name} objected: ${said.block.reason}`);
  }
  if (said.context) notes.push(said.context);
  const note = notes.join("\n");
  if (said.block) {
    // The call ran; the hook's objection comes back as its failure, its output kept.
    const output = result.output ?? "";
    return {
      ...result,
      success: false,
      output: result.output,
      error: [result.error, output ? `(output: ${output})` : "", note].filter(Boolean).join("\n"),
      error_code: result.error_code || -1,
    };
  }
  return { ...result, output: `${result.output ?? ""}\n\n${note}` };
}
