/**
 * The hooks' gate: PreToolUse hooks first, then the approval gate behind them; PostToolUse
 * hooks on each result. A hook's deny refuses the call (the model reads the reason as the call's
 * error), its allow lets the call through without asking, its ask has the approval gate ask (as
 * an ask rule does), no answer at all leaves the call to the approval gate, and its
 * `updatedInput` is checked against the tool's parameters again before anything runs: an invalid
 * rewrite refuses the call. Every decision a hook makes is recorded as `decided_by: "hook"` with
 * the hook's command and config file, and a rewrite's arguments are recorded beside the model's
 * (`updated_input`).
 */
import { type AgentResult, hookStopMessage, type HookStopped } from "./agent.ts";
import { ApprovalGate } from "./approval.ts";
import type { HooksConfig } from "../config/hooks_schema.ts";
import {
  type HookContainer,
  Hooks,
  type HookStop,
  type SessionStartSource,
} from "../hooks/hooks.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { Tool } from "../tools/base.ts";
import type { CallGate, GateDecision, ToolCall, ToolCallResult } from "../tools/executor.ts";
import { nestingProblem } from "../tools/nesting.ts";
import { validateArguments } from "../tools/validate.ts";

/** PreToolUse and PostToolUse hooks around `inner` (the approval gate, or none). */
export class HookGate implements CallGate {
  readonly #hooks: Hooks;
  readonly #inner?: CallGate;
  readonly #mode: () => string;

  /** `mode` names the approval mode in force, for the decision's record. */
  constructor(hooks: Hooks, inner: CallGate | undefined, mode: () => string) {
    this.#hooks = hooks;
    this.#inner = inner;
    this.#mode = mode;
  }

  /** The session's hooks (SessionEnd at the end of `deft serve` and `deft mcp`). */
  get hooks(): Hooks {
    return this.#hooks;
  }

  /** The gate behind the hooks. */
  get inner(): CallGate | undefined {
    return this.#inner;
  }

  async check(tool: Tool, args: Record<string, unknown>) {
    return (await this.decide(tool, args)).verdict;
  }

  async decide(tool: Tool, args: Record<string, unknown>, call?: ToolCall): Promise<GateDecision> {
    const said = await this.#hooks.preToolUse(tool.name, args, call?.call_id);
    const record = (decision: "allow" | "deny", reason?: string): ApprovalDecision => ({
      decision,
      decided_by: "hook",
      mode: this.#mode(),
      asked: false,
      ...(reason ? { reason } : {}),
      ...(said.by ? { hook: { name: said.by.name, source: said.by.source } } : {}),
    });
    if (said.decision === "deny") {
      const reason = said.reason ?? "a PreToolUse hook refused the call";
      return { verdict: reason, decision: record("deny", reason) };
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
          verdict: reason,
          decision: { ...record("deny", reason), updated_input: said.updatedInput },
        };
      }
      runArgs = checked.args;
    }
    const rewritten = runArgs !== args ? { updated_input: runArgs } : {};
    if (said.decision === "allow") {
      return { verdict: null, decision: { ...record("allow"), ...rewritten }, args: runArgs };
    }
    const inner = this.#inner;
    // A hook's `ask` is asked like an ask rule's: even where the mode would not ask.
    const asking = said.decision === "ask" && inner instanceof ApprovalGate ? inner : undefined;
    const behind: GateDecision = asking
      ? await asking.decideAsking(tool, runArgs, said.by)
      : call && inner?.decide
      ? await inner.decide(tool, runArgs, call)
      : {
        verdict: (await inner?.check(tool, runArgs)) ?? null,
        decision: { decision: "allow", decided_by: "mode", mode: this.#mode(), asked: false },
      };
    const hookRecord = (said.updatedInput !== undefined || asking) && said.by
      ? { hook: { name: said.by.name, source: said.by.source } }
      : {};
    return {
      ...behind,
      decision: { ...behind.decision, ...rewritten, ...hookRecord },
      args: runArgs,
    };
  }

  async after(
    tool: Tool,
    args: Record<string, unknown>,
    result: ToolCallResult,
  ): Promise<ToolCallResult> {
    // As in Claude Code, PostToolUse follows a call that completed; a failed one is the model's.
    if (!result.success) return result;
    const response = result.output;
    const said = await this.#hooks.postToolUse(tool.name, args, response, result.call_id);
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
    return result.success
      ? { ...result, output: `${result.output ?? ""}\n\n${note}` }
      : { ...result, error: `${result.error ?? ""}\n\n${note}` };
  }
}

/** Times a Stop hook may send one task back to the model before the task ends regardless. */
export const MAX_STOP_CONTINUATIONS = 3;

/**
 * The session's hooks, when its config has any (none in a replay: it repeats the recording).
 * `cwd` is a host folder (the workspace, or with a container the folder Deft started in).
 */
export function sessionHooks(
  config: HooksConfig,
  source: string | undefined,
  cwd: string,
  report: (text: string) => void,
  container?: HookContainer,
  tell?: (text: string) => void,
): Hooks | undefined {
  const hooks = new Hooks(config, source, { cwd, report, container, tell });
  return hooks.entries.length > 0 ? hooks : undefined;
}

/** Seconds a SessionEnd hook may run when the session ends on a signal (SIGTERM, SIGHUP, …). */
export const SESSION_END_SIGNAL_BOUND_S = 5;

/**
 * How a session ended, in Claude Code's SessionEnd `reason` words: `clear` (a new conversation:
 * /clear), `prompt_input_exit` (the user left at the prompt: /exit, Ctrl-D), `other` (a task or
 * connection that ended, a signal). Deft has no `logout`. `deft` is Deft's own, finer word.
 */
export interface SessionEnding {
  reason: "clear" | "logout" | "prompt_input_exit" | "other";
  deft: string;
  /** Ended by a signal: each hook gets at most `SESSION_END_SIGNAL_BOUND_S` seconds. */
  signal?: boolean;
}

/**
 * Runs the SessionEnd hooks once (a second call does nothing). They cannot block or delay the
 * end past their timeout, and never throw.
 */
export async function endSessionHooks(
  hooks: Hooks | undefined,
  ending: SessionEnding,
): Promise<void> {
  if (!hooks) return;
  await hooks.sessionEnd(
    ending.reason,
    ending.deft,
    ending.signal ? SESSION_END_SIGNAL_BOUND_S : undefined,
  ).catch(() => {});
}

/** A hook's stop request as the run records it. */
export function stoppedBy(stop: HookStop): HookStopped {
  return { event: stop.event, hook: stop.by.name, source: stop.by.source, reason: stop.reason };
}

/**
 * What the prompt hooks made of a task: the message for the model, or why it is not sent. With
 * `start` (the first prompt of a conversation: a new, resumed, cleared or compacted one) the
 * SessionStart hooks run first, and their context goes with this prompt. `carried` is such
 * context not yet delivered (its prompt was blocked); a blocked prompt hands its own back as
 * `startContext`, for the next prompt.
 */
export async function promptWithHooks(
  hooks: Hooks,
  task: string,
  start: SessionStartSource | undefined,
  carried?: string,
): Promise<
  { message: string } | { blocked: string; stopped?: HookStopped; startContext?: string }
> {
  const starts: string[] = carried ? [carried] : [];
  if (start) {
    const context = await hooks.sessionStart(start);
    if (context) starts.push(context);
  }
  const startContext = starts.length > 0 ? starts.join("\n\n") : undefined;
  const said = await hooks.userPromptSubmit(task);
  const stop = hooks.takeStop();
  if (stop) {
    const stopped = stoppedBy(stop);
    return { blocked: hookStopMessage(stopped), stopped, startContext };
  }
  if (said.block) {
    return {
      blocked:
        `UserPromptSubmit hook ${said.block.by.name} blocked the prompt: ${said.block.reason}`,
      startContext,
    };
  }
  const contexts = [...starts, ...(said.context ? [said.context] : [])];
  return { message: contexts.length > 0 ? `${task}\n\n${contexts.join("\n\n")}` : task };
}

/**
 * Runs a task, then its Stop hooks: a hook that blocks the stop sends its reason to the model as
 * the next message and the task goes on, at most `MAX_STOP_CONTINUATIONS` times (the hooks see
 * `stop_hook_active: true` after the first), so no hook can keep a run going forever. Only a
 * task that finished is sent back; an interrupted or failed one ends as it is. A Stop hook's
 * `continue: false` takes precedence over its block: the task ends as it is, the stop reason
 * shown and recorded (`stoppedByHook`).
 */
export async function runWithStopHooks(
  hooks: Hooks | undefined,
  message: string,
  run: (message: string) => Promise<AgentResult>,
  note: (text: string) => void,
): Promise<AgentResult> {
  let result = await run(message);
  for (let n = 0; hooks && n < MAX_STOP_CONTINUATIONS; n++) {
    if (!result.success || result.interrupted) break;
    const said = await hooks.stop(n > 0);
    const stop = hooks.takeStop();
    if (stop) {
      const stopped = stoppedBy(stop);
      note(hookStopMessage(stopped));
      return { ...result, stoppedByHook: stopped };
    }
    if (!said.block) break;
    note(`Stop hook ${said.block.by.name} sent the model back: ${said.block.reason}`);
    if (n + 1 === MAX_STOP_CONTINUATIONS) {
      note(`(the last time: a task goes back at most ${MAX_STOP_CONTINUATIONS} times)`);
    }
    const steps = result.steps;
    result = await run(said.block.reason);
    result = { ...result, steps: steps + result.steps };
  }
  return result;
}
