/**
 * The hooks of a session around its turns: SessionStart and UserPromptSubmit before a prompt
 * goes to the model, Stop hooks when it would end, SessionEnd when the session does. The hooks
 * around each tool call (PreToolUse, PostToolUse) are steps of the gate pipeline
 * (src/gate/hooks.ts).
 */
import { type AgentResult, hookStopMessage, type HookStopped } from "./agent.ts";
import type { HooksConfig } from "../config/hooks_schema.ts";
import {
  type HookContainer,
  hookEntries,
  Hooks,
  type HookStop,
  type SessionStartSource,
} from "../hooks/hooks.ts";
import { hookPolicy, hookPolicyUnderList } from "../policy/hooks.ts";
import type { PolicySettings } from "../policy/process.ts";
import type { TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { AgentConsole } from "./console.ts";
import { watchNetwork } from "./network_watch.ts";

/** Times a Stop hook may send one task back to the model before the task ends regardless. */
export const MAX_STOP_CONTINUATIONS = 3;

/**
 * The session's hooks, when its config has any (none in a replay: it repeats the recording).
 * `cwd` is a host folder (the workspace, or with a container the folder Deft started in). With
 * a network list and a hook that runs sandboxed, the list's proxy is started for them.
 */
export async function sessionHooks(
  config: HooksConfig,
  source: string | undefined,
  cwd: string,
  report: (text: string) => void,
  container?: HookContainer,
  tell?: (text: string) => void,
  settings: PolicySettings = {},
): Promise<Hooks | undefined> {
  const entries = hookEntries(config, source);
  if (entries.length === 0) return undefined;
  const theirs = container ? { ...settings, sandbox: undefined } : settings;
  const policy = entries.some((e) => e.hook.sandbox !== "none")
    ? await hookPolicyUnderList(cwd, theirs)
    : hookPolicy(cwd, theirs);
  const modelWorkspace = container?.workspace ?? cwd;
  return new Hooks(config, source, { cwd, report, container, tell, policy, modelWorkspace });
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
 * end past their timeout, and never throw. With `session`, their network decisions are shown on
 * its console and recorded in the trajectory its last task recorded into, as the shell's are.
 */
export async function endSessionHooks(
  hooks: Hooks | undefined,
  ending: SessionEnding,
  session?: { console: AgentConsole; recorder?: TrajectoryRecorder },
): Promise<void> {
  if (!hooks) return;
  const unwatch = session?.recorder && watchNetwork(session.console, session.recorder);
  const before = session?.recorder?.data.network?.length ?? 0;
  try {
    await hooks.sessionEnd(
      ending.reason,
      ending.deft,
      ending.signal ? SESSION_END_SIGNAL_BOUND_S : undefined,
    ).catch(() => {});
  } finally {
    unwatch?.();
  }
  // The trajectory was written at the task's end: write it again when the hooks added to it.
  if ((session?.recorder?.data.network?.length ?? 0) > before) session?.recorder?.flush();
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
