/**
 * The gate pipeline: the one way a call the executor validated reaches its tool, in every front
 * end (`deft run`, `interactive`, `acp`, `serve`, `mcp`, batch tasks, container sessions). The
 * steps, in order:
 *
 * 0. **The session's start** (`GateParts.start`): a session that drew its prompt before
 *    recording its start state (`deft interactive`, agent/session_start.ts) has every call wait
 *    for that record first; a start that failed fails the call with its error.
 * 1. **PreToolUse hooks** (hooks.ts): a deny refuses the call, an allow lets it through
 *    unasked, an ask has step 3 put the question, a rewrite replaces the arguments (checked
 *    again against the tool's parameters).
 * 2. **Lasting rules** (the approval rules, rules.ts): a deny refuses in every mode; an ask has
 *    step 3 put the question; an allow lets through what the mode would ask about.
 * 3. **Approval mode** (approval.ts): asks the user when the mode, an ask rule or a hook's ask
 *    says so. Where nobody can be asked (`deft run`, serve, mcp, batch) such a call is refused,
 *    naming the rule or hook, unless the user passed `--approve-asks`.
 * 4. **Call plan**: how the tool is to run a call let through (`CallPlan`, beside the
 *    arguments, never inside them): a reader let through unasked runs where it cannot act.
 * 5. **Record**: the decision and who made it (hook, rule, mode, user), with a hook's rewrite,
 *    goes back with the result: into the trajectory, `--json` and the call's telemetry span
 *    (`deft.approval.*`, set by the executor's span from this record).
 *
 * After the call: **PostToolUse hooks** (hooks.ts) see its result and may amend it.
 *
 * A call the user typed at the prompt (`!cmd`, `/undo`: `ToolCall.by` is `user`) passes the same
 * steps, but its step 3 is already answered: typing it was the user's yes, so the mode asks
 * nothing (recorded as `decided_by: "user"`, `typed`), unless a deny rule may hide in the line
 * (then it is decided as the model's would be). Hooks, deny rules, the call plan (it runs in the
 * session's sandbox as an approved call does) and the record apply as to the model's.
 *
 * A replay (`deft run --replay`) runs no hooks and asks nobody: its recording decides (replay.ts).
 * The executor's gate is fixed when it is built (`gatedExecutor`): a front end may swap a tool
 * or add tools, never take the pipeline away.
 */
import type { Hooks } from "../hooks/hooks.ts";
import type { CallPlan, Tool } from "../tools/base.ts";
import {
  type CallGate,
  type GateDecision,
  type GateVerdict,
  RUN_UNASKED,
  type ToolCall,
  type ToolCallResult,
  ToolExecutor,
} from "../tools/executor.ts";
import type { ApprovalGate } from "./approval.ts";
import { postToolUse, preToolUse } from "./hooks.ts";
import { ReplayGate } from "./replay.ts";

/** What the pipeline is made of: the hooks (if any) and the approval gate, or a replay's. */
export interface GateParts {
  hooks?: Hooks;
  approval: ApprovalGate | ReplayGate;
  /** Step 0: what every call waits for first (begun by the first call that needs it). */
  start?: { run(): Promise<void> };
}

/** Every step a call passes between the executor's validation and its tool. */
export class GatePipeline implements CallGate {
  readonly #hooks?: Hooks;
  readonly #approval: ApprovalGate | ReplayGate;
  readonly #start?: { run(): Promise<void> };

  constructor(parts: GateParts) {
    this.#hooks = parts.hooks;
    this.#approval = parts.approval;
    this.#start = parts.start;
  }

  async check(tool: Tool, args: Record<string, unknown>): Promise<GateVerdict> {
    return (await this.decide(tool, args)).verdict;
  }

  async decide(tool: Tool, args: Record<string, unknown>, call?: ToolCall): Promise<GateDecision> {
    // 0. The session's start state exists.
    await this.#start?.run();
    const approval = this.#approval;
    if (approval instanceof ReplayGate) return plan(await approval.decide(tool, args, call));
    const mode = approval.mode;
    // 1. PreToolUse hooks.
    const hooked = this.#hooks
      ? await preToolUse(this.#hooks, tool, args, call, mode)
      : { args, record: {} };
    if ("decided" in hooked) return plan(hooked.decided);
    const runArgs = hooked.args;
    const effect = tool.effects(runArgs);
    // 2. Lasting rules.
    const ruled = approval.ruleOn(tool, effect);
    // 3. Approval mode (a deny rule has refused already: no mode lets its call through; the
    // user's own call was answered by typing it, unless a deny rule may hide in it).
    const decided = ruled?.action === "deny"
      ? approval.ruleDenied(effect, ruled)
      : call?.by === "user" && ruled?.unjudged !== "deny"
      ? typed(mode)
      : await approval.byMode(
        tool,
        runArgs,
        effect,
        ruled,
        hooked.asks && { hook: { name: hooked.asks.name, source: hooked.asks.source } },
      );
    // 4. Call plan, 5. record.
    return plan({
      ...decided,
      decision: { ...decided.decision, ...hooked.record },
      args: runArgs,
    });
  }

  /** PostToolUse hooks, on each result of a call the pipeline let through. */
  async after(
    tool: Tool,
    args: Record<string, unknown>,
    result: ToolCallResult,
  ): Promise<ToolCallResult> {
    return this.#hooks ? await postToolUse(this.#hooks, tool, args, result) : result;
  }
}

/** Step 3 for a call the user typed: their yes, nobody asked. */
function typed(mode: string): GateDecision {
  return {
    verdict: null,
    decision: { decision: "allow", decided_by: "user", mode, asked: false, typed: true },
  };
}

/** Step 4: the call plan of a decision that lets its call through. */
function plan(decided: GateDecision): GateDecision {
  const callPlan: CallPlan | undefined = decided.verdict === RUN_UNASKED
    ? { unasked: true }
    : undefined;
  return callPlan ? { ...decided, plan: callPlan } : decided;
}

/** The tools behind the pipeline: the executor every session and tool server runs calls with. */
export function gatedExecutor(tools: readonly Tool[], parts: GateParts): ToolExecutor {
  return new ToolExecutor(tools, new GatePipeline(parts));
}
