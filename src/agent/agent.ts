/**
 * The agent loop: ask the model, run the tools it calls, append the results, repeat until it calls
 * `task_done` or the steps run out. The loop talks to tools only through the executor and to the
 * model only through an `LLMClient`.
 */
import type { ToolCallResult, ToolExecutor } from "../tools/executor.ts";
import { catalogEntry } from "../tools/catalog.ts";
import type { LLMClient, LLMImage, LLMMessage, LLMResponse, LLMToolCall } from "../llm/types.ts";
import { toolMessage } from "../llm/tool_message.ts";
import type { RecordedToolResult, TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { AgentConsole } from "./console.ts";
import type { ContextManager } from "./context.ts";
import type { Lakeview } from "./lakeview.ts";
import type { GitSandbox } from "../policy/git.ts";
import { patchChanges, workspacePatch } from "./patch.ts";
import { withSpan } from "../telemetry/tracing.ts";
import { type Budget, type BudgetStop, budgetStopMessage } from "./budget.ts";
import { EMPTY_PATCH_REFUSAL, NO_TOOL_CALL_NUDGE, systemPrompt, taskMessage } from "./prompt.ts";

/** What a run needs. */
export interface AgentOptions {
  client: LLMClient;
  executor: ToolExecutor;
  recorder: TrajectoryRecorder;
  console: AgentConsole;
  workspace: string;
  maxSteps: number;
  parallelToolCalls: boolean;
  mustPatch?: boolean;
  baseCommit?: string;
  /** How `mustPatch` gets the workspace's patch when not on the host (a container's). */
  patch?: () => Promise<string>;
  /** The sandbox the patch's git commands run in (the tools' `sandbox`); default: none. */
  gitSandbox?: GitSandbox;
  signal?: AbortSignal;
  /** Keeps the conversation under the model's window, when the window is known. */
  context?: ContextManager;
  /** Labels each step in the background, when a lakeview model is configured. */
  lakeview?: Lakeview;
  /** A conversation to go on with (interactive turns, resumed runs); the loop appends to it. */
  conversation?: LLMMessage[];
  /** Images the user attached to the task: they go with its message. */
  images?: LLMImage[];
  /** A text-only answer ends the run (someone is there to read it); else the model is nudged. */
  textEndsTurn?: boolean;
  /** The project's instructions (AGENTS.md), added to the system prompt. */
  instructions?: string;
  /**
   * A hook's `continue: false` (src/hooks): asked before each model call and after each step's
   * calls; a stop it returns ends the run there, its reason the run's final result.
   */
  hookStop?: () => HookStopped | undefined;
  /**
   * Asked before the conversation is shortened to fit the window (PreCompact hooks, trigger
   * `auto`); false keeps it as it is. Asked once each time the conversation crosses the window:
   * after a false it is kept whole, unasked, until it is back under the window (or the run ends).
   */
  beforeCompact?: () => Promise<boolean>;
  /**
   * The session's budget caps (./budget.ts): checked before every model request and between
   * tool calls; a cap reached ends the run there, saying what was spent.
   */
  budget?: Budget;
}

/** A run a hook stopped (`continue: false`): which event, which hook, and its `stopReason`. */
export interface HookStopped {
  event: string;
  hook: string;
  source?: string;
  reason: string;
}

/** How a run ended. */
export interface AgentResult {
  success: boolean;
  interrupted: boolean;
  finalResult: string | null;
  steps: number;
  /** A hook's `continue: false` ended it. */
  stoppedByHook?: HookStopped;
  /** A budget cap ended it. */
  budgetStop?: BudgetStop;
}

/** Runs `task` to completion, the step limit, an error or an interruption. */
export function runAgent(task: string, options: AgentOptions): Promise<AgentResult> {
  // One span per run or interactive turn; its model and tool calls are its children.
  return withSpan("invoke_agent deft", {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "deft",
  }, async (span) => {
    const { budget, recorder } = options;
    budget?.begin();
    let result: AgentResult;
    try {
      result = await runTurn(task, options);
    } finally {
      budget?.end();
      if (budget) {
        recorder.data.budget = budget.record();
        recorder.flush();
      }
    }
    span.set({ "deft.turn.steps": result.steps, "deft.turn.success": result.success });
    return result;
  }, { root: true, conversation: options.recorder.data.session_id });
}

async function runTurn(task: string, options: AgentOptions): Promise<AgentResult> {
  const { client, executor, recorder, console, signal } = options;
  const definitions = executor.tools.map((t) => t.jsonDefinition());
  const messages = options.conversation ?? [];
  if (messages.length === 0) {
    messages.push({ role: "system", content: systemPrompt(options.instructions) });
    messages.push({ role: "user", content: taskMessage(options.workspace, task) });
  } else {
    messages.push({ role: "user", content: task });
  }
  if (options.images?.length) {
    const last = messages[messages.length - 1];
    if (last.role === "user") last.images = options.images;
  }
  const definitionChars = JSON.stringify(definitions).length;
  // Whether a PreCompact hook kept the conversation whole since it last crossed the window.
  const kept = { whole: false };
  for (let step = 1; step <= options.maxSteps; step++) {
    if (signal?.aborted) return interrupted(recorder, step - 1);
    let estimated = 0;
    if (await compactAllowed(messages, definitionChars, options, kept)) {
      estimated = fitContext(messages, step, definitionChars, options);
    } else estimated = options.context?.estimate(messages, definitionChars) ?? 0;
    const stopBefore = options.hookStop?.();
    if (stopBefore) return stoppedByHook(recorder, step - 1, stopBefore);
    const overBefore = await options.budget?.check(signal);
    if (overBefore) return budgetStopped(recorder, step - 1, overBefore);
    let response: LLMResponse;
    try {
      console.waiting?.(step);
      const onText = console.text?.bind(console);
      response = await client.chat(messages, definitions, signal, onText);
      options.context?.calibrate(estimated, response.usage.input_tokens);
    } catch (e) {
      if (signal?.aborted) return interrupted(recorder, step - 1);
      const message = `The model call failed: ${(e as Error).message}`;
      recorder.recordStep(emptyStep(step, "error", message));
      recorder.finalize(false, message);
      return { success: false, interrupted: false, finalResult: message, steps: step };
    }
    await options.budget?.charge(response.usage, client.provider);
    recorder.recordInteraction({
      provider: client.provider,
      model: client.model,
      input_messages: recorder.unrecorded(messages),
      response,
      tools_available: definitions.map((d) => d.name),
    });
    const answer: LLMMessage = {
      role: "assistant",
      content: response.content,
      tool_calls: response.tool_calls,
    };
    messages.push(answer);
    recorder.markRecorded(answer);

    const calls = response.tool_calls;
    if (calls.length === 0 && options.textEndsTurn) {
      recorder.recordStep({ ...emptyStep(step, "completed"), llm_response: response });
      recorder.finalize(true, response.content);
      return { success: true, interrupted: false, finalResult: response.content, steps: step };
    }
    if (calls.length === 0) {
      messages.push({ role: "user", content: NO_TOOL_CALL_NUDGE });
      recorder.recordStep({ ...emptyStep(step, "completed"), llm_response: response });
      console.step(step, [], [], response.content);
      continue;
    }

    console.calling?.(step, calls);
    const { results, hookStop } = await runCalls(calls, options);
    let done = false;
    // The done signal is the call whose catalog entry says it ends the run (`task_done`).
    const doneIndex = calls.findIndex((c) => catalogEntry(c.name)?.endsRun === true);
    if (doneIndex >= 0 && results[doneIndex].success) {
      let lost: string | undefined;
      const patch = options.mustPatch
        ? await (options.patch?.() ?? workspacePatch(options.workspace, {
          base: options.baseCommit,
          sandbox: options.gitSandbox,
        })).catch((e) => {
          lost = (e as Error).message;
          return "";
        })
        : "x";
      // Only lines saying a file was too large to read are no change the task made.
      if (!patchChanges(patch)) {
        results[doneIndex] = {
          ...results[doneIndex],
          success: false,
          output: null,
          error: lost === undefined
            ? EMPTY_PATCH_REFUSAL
            : `task_done was refused: the patch could not be computed (${lost}).`,
          error_code: -1,
        };
      } else {
        done = true;
      }
    }
    for (const result of results) messages.push(toolMessage(result));
    recorder.recordStep({
      step_number: step,
      state: "completed",
      llm_response: response,
      tool_calls: calls,
      tool_results: results.map(recordResult),
      reflection: null,
      error: null,
    });
    console.step(step, calls, results, response.content);
    summarize(step, response, results, options);
    if (done) {
      const finalResult = response.content || "Task done.";
      recorder.finalize(true, finalResult);
      return { success: true, interrupted: false, finalResult, steps: step };
    }
    const stopAfter = hookStop ?? options.hookStop?.();
    if (stopAfter) return stoppedByHook(recorder, step, stopAfter);
    const overAfter = await options.budget?.check(signal);
    if (overAfter) return budgetStopped(recorder, step, overAfter);
    if (signal?.aborted) return interrupted(recorder, step);
  }
  const message = "Task execution exceeded maximum steps without completion.";
  recorder.finalize(false, message);
  return { success: false, interrupted: false, finalResult: message, steps: options.maxSteps };
}

function summarize(
  step: number,
  response: LLMResponse,
  results: ToolCallResult[],
  options: AgentOptions,
): void {
  options.lakeview?.summarize(step, response, results, (summary, error) => {
    options.recorder.annotateStep(step, summary);
    if (summary) options.console.note(`[${step}] ${summary.tag}: ${summary.summary}`);
    else options.console.note(`[${step}] (no step summary: ${error})`);
  });
}

/**
 * False when the conversation would be shortened and a PreCompact hook keeps it as it is. The
 * hook is asked once per crossing of the window: a block holds (`kept.whole`), unasked, while
 * the conversation stays over it, so a hook that keeps blocking runs once, not at every step.
 */
async function compactAllowed(
  messages: LLMMessage[],
  definitionChars: number,
  options: AgentOptions,
  kept: { whole: boolean },
): Promise<boolean> {
  const { context, beforeCompact } = options;
  if (!context || !beforeCompact) return true;
  if (context.estimate(messages, definitionChars) <= context.budget) {
    kept.whole = false;
    return true;
  }
  if (kept.whole) return false;
  const allowed = await beforeCompact();
  kept.whole = !allowed;
  return allowed;
}

/** Shortens old messages when the window requires it; returns the prompt's estimated tokens. */
function fitContext(
  messages: LLMMessage[],
  step: number,
  definitionChars: number,
  options: AgentOptions,
): number {
  const { context, recorder, console } = options;
  if (!context) return 0;
  const events = context.fit(messages, step, definitionChars);
  if (events.length > 0) {
    (recorder.data.context_events ??= []).push(...events);
    const saved = events.reduce((n, e) => n + e.before_chars - e.after_chars, 0);
    console.note(`[${step}] context: shortened ${events.length} old message(s) by ${saved} chars`);
  }
  return context.estimate(messages, definitionChars);
}

/**
 * Runs the calls of one step; every call gets exactly one result, in call order. One at a time,
 * a stop (the turn's signal, a hook's `continue: false`, a budget cap) is asked between them:
 * once there is one, the calls not yet started are not run and each says why, so every call id
 * is answered and the conversation stays valid (`deft -c` goes on from it).
 */
async function runCalls(
  calls: LLMToolCall[],
  options: AgentOptions,
): Promise<{ results: ToolCallResult[]; hookStop?: HookStopped }> {
  const runnable = calls.filter((c) => !c.argumentsError);
  const toolCalls = runnable.map((c) => ({
    name: c.name,
    call_id: c.call_id,
    arguments: c.arguments,
  }));
  const stops: { hook?: HookStopped } = {};
  const ran = options.parallelToolCalls
    ? await options.executor.parallelToolCall(toolCalls)
    : await callsUntilStopped(toolCalls, options, stops);
  let next = 0;
  const results = calls.map((c) =>
    c.argumentsError
      ? {
        name: c.name,
        call_id: c.call_id,
        success: false,
        output: null,
        error: `The arguments for tool '${c.name}' are not valid JSON (${c.argumentsError}). ` +
          `Send them as one JSON object.`,
        error_code: -1,
      }
      : ran[next++]
  );
  return { results, hookStop: stops.hook };
}

/**
 * Runs the calls one at a time, asking between them whether the turn must stop: the user
 * interrupted it (Ctrl-C, an ACP client's cancel), a hook said `continue: false`, or a budget
 * cap was reached. From then on the rest are not run, and each says why (the loop then ends
 * the run). A hook's stop is handed back in `stops`, as it is taken only once.
 */
async function callsUntilStopped(
  toolCalls: Parameters<ToolExecutor["sequentialToolCall"]>[0],
  options: AgentOptions,
  stops: { hook?: HookStopped },
): Promise<ToolCallResult[]> {
  const results: ToolCallResult[] = [];
  let why: string | undefined;
  for (const call of toolCalls) {
    if (why === undefined && results.length > 0) why = await stopBetweenCalls(options, stops);
    if (why !== undefined) {
      results.push({
        name: call.name,
        call_id: call.call_id,
        success: false,
        output: null,
        error: `Not run: ${why}`,
        error_code: -1,
      });
      continue;
    }
    results.push(...await options.executor.sequentialToolCall([call]));
  }
  return results;
}

/** Why the calls not yet started must not run, if they must not. */
async function stopBetweenCalls(
  options: AgentOptions,
  stops: { hook?: HookStopped },
): Promise<string | undefined> {
  if (options.signal?.aborted) return "the turn was interrupted before this call started.";
  const hook = options.hookStop?.();
  if (hook) {
    stops.hook = hook;
    return `${hookStopMessage(hook)}.`;
  }
  const over = await options.budget?.check();
  return over && budgetStopMessage(over);
}

function recordResult(result: ToolCallResult): RecordedToolResult {
  return {
    call_id: result.call_id,
    name: result.name,
    success: result.success,
    result: result.output,
    error: result.error,
    ...(result.approval ? { approval: result.approval } : {}),
    ...(result.record?.subagent ? { subagent: result.record.subagent } : {}),
    ...(result.record?.edits ? { edits: result.record.edits } : {}),
  };
}

function emptyStep(
  step: number,
  state: "completed" | "error" | "interrupted",
  error: string | null = null,
) {
  return {
    step_number: step,
    state,
    llm_response: null,
    tool_calls: [],
    tool_results: [],
    reflection: null,
    error,
  };
}

/** The message of a run a hook stopped: what the user sees and the trajectory's final result. */
export function hookStopMessage(stop: HookStopped): string {
  return `Stopped by ${stop.event} hook ${stop.hook} (continue: false): ${stop.reason}`;
}

function stoppedByHook(
  recorder: TrajectoryRecorder,
  steps: number,
  stop: HookStopped,
): AgentResult {
  const message = hookStopMessage(stop);
  recorder.recordStep(emptyStep(steps + 1, "interrupted", message));
  recorder.finalize(false, message);
  return { success: false, interrupted: false, finalResult: message, steps, stoppedByHook: stop };
}

function budgetStopped(recorder: TrajectoryRecorder, steps: number, stop: BudgetStop): AgentResult {
  const message = budgetStopMessage(stop);
  recorder.recordStep(emptyStep(steps + 1, "interrupted", message));
  recorder.finalize(false, message);
  return { success: false, interrupted: false, finalResult: message, steps, budgetStop: stop };
}

function interrupted(recorder: TrajectoryRecorder, steps: number): AgentResult {
  const message = "Interrupted by the user.";
  recorder.recordStep(emptyStep(steps + 1, "interrupted", message));
  recorder.finalize(false, message);
  return { success: false, interrupted: true, finalResult: message, steps };
}
