/**
 * `deft run`: one task, start to finish. Exit codes: 0 the task completed, 1 it failed, ran out of
 * steps or had a call refused because nobody could be asked (an ask rule or hook), 2 usage or configuration errors, 3 a budget cap was reached (agent/budget.ts), 130 interrupted (Ctrl-C; 143 on SIGTERM, 129 on SIGHUP).
 * Progress goes to stderr; `--output-format json` (`--json`) prints a summary on stdout,
 * `stream-json` one event per line.
 */
import { readImageFile } from "./interactive/mentions.ts";
import { runApprovals, type RunOutcome, runOutcome, runSummary } from "../agent/outcome.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";
import { divergenceLines } from "../agent/replay.ts";
import type { AgentResult } from "../agent/agent.ts";
import {
  openSession,
  runTask,
  type Session,
  type SessionOptions,
  type TaskOptions,
} from "../agent/session.ts";
import {
  readTrajectory,
  type Trajectory,
  type TrajectoryRecorder,
} from "../trajectory/recorder.ts";
import { askOnTerminal } from "./approval.ts";
import { chooseConsole, type OutputFormat } from "./console/choose.ts";
import { LiveConsole } from "./console/live.ts";
import type { ColorMode } from "./console/style.ts";
import { closeWorkplace, sessionWorkspace } from "./session_place.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { readStdin, UsageError, writeStderr, writeStdout } from "./io.ts";
import { eventLine } from "./console/stream_json.ts";
import {
  checkResumeOptions,
  CONTINUE_MESSAGE,
  type Resumed,
  type ResumeOptions,
  resumeTarget,
} from "./resume.ts";
import { onStopSignals } from "./signals.ts";
import { withSpan } from "../telemetry/tracing.ts";
import { BUDGET_EXIT_CODE } from "../agent/budget.ts";
import { readOwnText } from "../policy/own_file.ts";

/** Options of `deft run`, as commander hands them over. */
export interface RunOptions extends SessionOptions, ResumeOptions {
  file?: string;
  /** `--image FILE` (repeatable): images sent with the task. */
  image?: string[];
  mustPatch?: boolean;
  patchPath?: string;
  trajectoryFile?: string;
  json?: boolean;
  outputFormat?: OutputFormat;
  color?: ColorMode;
  replay?: string;
  replayExact?: boolean;
}

/** Runs one task; returns the exit code. */
export async function runCommand(taskArg: string | undefined, opts: RunOptions): Promise<number> {
  const format = outputFormat(opts);
  try {
    return await withSpan(
      "deft.run",
      {},
      async (span) => {
        const code = await runFormatted(taskArg, { ...opts, outputFormat: format });
        span.set({ "deft.exit_code": code });
        return code;
      },
      { root: true },
    );
  } catch (e) {
    // Scripts reading stdout get the error there too, in the shape they parse.
    if (e instanceof UsageError && format !== "text") {
      const error = { success: false, exit_code: 2, error: e.message };
      await writeStdout(
        JSON.stringify(format === "stream-json" ? { type: "error", ...error } : error) + "\n",
      );
    }
    throw e;
  }
}

function outputFormat(opts: RunOptions): OutputFormat {
  if (opts.json && opts.outputFormat && opts.outputFormat !== "json") {
    throw new UsageError(
      `--json means --output-format json; it cannot go with ${opts.outputFormat}.`,
    );
  }
  return opts.json ? "json" : opts.outputFormat ?? "text";
}

async function runFormatted(taskArg: string | undefined, opts: RunOptions): Promise<number> {
  const recording = opts.replay ? await readRecording(opts.replay) : undefined;
  checkResumeOptions(opts);
  const wantsResume = opts.continue === true || opts.resume !== undefined;
  if (wantsResume && recording) throw new UsageError("--replay cannot be combined with a resume.");
  const goOn = wantsResume && taskArg === undefined && opts.file === undefined;
  // Refused before --rewind-to touches the files.
  const check = (t: Trajectory) => {
    if (goOn) refuseCompleted(t, opts);
  };
  const task = goOn ? CONTINUE_MESSAGE : await resolveTask(taskArg, opts.file, recording);
  const images = await Promise.all((opts.image ?? []).map(readImageFile));
  // -w as the workplace takes it (inside a container, a folder there).
  const workspace = await sessionWorkspace(opts);
  const console = chooseConsole({ outputFormat: opts.outputFormat, color: opts.color, workspace });
  let resumed: Resumed | undefined;
  const session = await openSession(opts, {
    workspace,
    console,
    asking: {
      defaultMode: "never",
      ask: askOnTerminal,
      terminal: Deno.stdin.isTerminal(),
      unattended: "deft run",
    },
    write: writeStderr,
    // The session to go on with is looked up among the open place's (a container's workspace
    // and image are known once it is), and rewound there, before anything runs in it.
    opened: async (workplace) => {
      resumed = await resumeTarget(opts, workplace.place, check, workplace);
      const note = resumed && workplace.resumeNote(resumed.trajectory);
      if (note) console.note(note);
    },
  }, recording);
  await requireRepository(session, opts);
  if (resumed) {
    session.console.note(`resuming session ${resumed.link.session_id} (${resumed.path})`);
  }
  let ran;
  let outcome;
  try {
    ran = await runInterruptible(session, task, {
      trajectoryFile: opts.trajectoryFile,
      mustPatch: opts.mustPatch,
      // Headless peers end when the model answers; --must-patch asks for an edit, so it nudges on.
      textEndsTurn: !opts.mustPatch,
      conversation: resumed?.conversation,
      images: images.length > 0 ? images : undefined,
      resumedFrom: resumed?.link,
      recordedTask: task === CONTINUE_MESSAGE ? resumed?.trajectory.task : undefined,
    });
    // The patch is computed where the tools act, so before the workplace closes.
    outcome = await runOutcome(session, ran.recorder, {
      patchPath: opts.patchPath,
      recording,
      replayExact: opts.replayExact,
    });
  } finally {
    // SessionEnd hooks first (one may look into the workplace), bounded on a signal.
    const interrupted = ran?.result.interrupted === true;
    await endSessionHooks(session.hooks, {
      reason: "other",
      deft: !ran
        ? "error"
        : interrupted
        ? "interrupted"
        : ran.result.success
        ? "completed"
        : "failed",
      signal: interrupted,
    }, session);
    await closeWorkplace(session);
  }
  const { result, recorder, stopCode } = ran;
  report(session, outcome, recorder.path);
  const unasked = refusedUnasked(session, recorder);
  writeStderr((await import("./report.ts")).reportHint(recorder.path));
  const divergences = outcome.divergences;
  // --must-patch promises a patch: one that could not be computed is no success.
  const patchLost = opts.mustPatch === true && outcome.patchError !== undefined;
  const exitCode = result.interrupted
    ? stopCode
    : result.budgetStop
    ? BUDGET_EXIT_CODE
    : result.success && !divergences?.length && !patchLost && !unasked
    ? 0
    : 1;
  if (
    opts.outputFormat === "text" && endedOnAnswer(result, recorder) && result.finalResult &&
    !shownOnTerminal(session, result.finalResult)
  ) {
    // The answer is what a headless run is for: last, on stdout, where a pipe picks it up.
    await writeStdout(`${terminalText(maskOutput(result.finalResult.trimEnd()))}\n`);
  }
  if (opts.outputFormat === "json" || opts.outputFormat === "stream-json") {
    const event = opts.outputFormat === "stream-json" ? { type: "run_done" } : {};
    const summary = runSummary(session, result, recorder, outcome, exitCode);
    await writeStdout(eventLine({ ...event, ...summary }));
  }
  return exitCode;
}

/**
 * Says which calls were refused because a rule or hook asked about them and nobody could be
 * asked; true when there were any (the run then exits 1: it did not do all it was asked to).
 */
function refusedUnasked(session: Session, recorder: TrajectoryRecorder): boolean {
  const refused = runApprovals(recorder.data).filter((a) => a.nobody_to_ask);
  for (const a of refused) {
    const by = a.rule
      ? `the rule \`ask ${a.rule.text}\` (${a.rule.source})`
      : `the PreToolUse hook ${a.hook?.name}${a.hook?.source ? ` (${a.hook.source})` : ""}`;
    session.console.note(
      `refused: a ${a.tool} call in step ${a.step}: ${terminalText(maskOutput(by))} asks ` +
        `about it, and nobody can be asked in deft run`,
    );
  }
  if (refused.length > 0) {
    session.console.note(
      "to be asked, run on a terminal with --approval commands; to let such calls run " +
        "unasked, pass --approve-asks",
    );
  }
  return refused.length > 0;
}

/** A completed session is not gone on with without a next task. */
function refuseCompleted(trajectory: Trajectory, opts: RunOptions): void {
  if (!trajectory.success) return;
  throw new UsageError(
    `session ${trajectory.session_id ?? null} completed its task; give the next one: ` +
      `deft run "TASK" ${opts.continue ? "--continue" : `--resume ${opts.resume}`}`,
  );
}

/**
 * True when the live console streamed `answer` on stderr and stdout is a terminal too: then it
 * is the same screen (Deno cannot compare the two descriptors, and both being terminals but
 * different ones is rare), and a second copy would show the answer twice. A pipe or a file on
 * stdout always gets it.
 */
function shownOnTerminal(session: Session, answer: string): boolean {
  const { console } = session;
  return Deno.stdout.isTerminal() && Deno.stderr.isTerminal() &&
    console instanceof LiveConsole && console.showed(answer);
}

/** The run succeeded on a reply in words (no tool call), so its final result is the answer. */
function endedOnAnswer(result: AgentResult, recorder: TrajectoryRecorder): boolean {
  const last = recorder.data.agent_steps.at(-1);
  return result.success && last !== undefined && last.tool_calls.length === 0;
}

/**
 * Runs the task; Ctrl-C, SIGTERM and SIGHUP stop it (tools closed, trajectory kept), a second one
 * exits at once. `stopCode` is the exit code the stopping signal asks for.
 */
async function runInterruptible(
  session: Session,
  task: string,
  opts: Omit<TaskOptions, "signal">,
): Promise<{ result: AgentResult; recorder: TrajectoryRecorder; stopCode: number }> {
  const { console, executor } = session;
  const controller = new AbortController();
  let interrupts = 0;
  let stopCode = 130;
  const onInterrupt = (_signal?: Deno.Signal, code = 130) => {
    if (++interrupts > 1) Deno.exit(code);
    stopCode = code;
    console.note("interrupted: stopping the run (press Ctrl-C again to quit at once)");
    controller.abort(new Error("interrupted"));
    // Closing the tools kills a running command, so the step ends now instead of at its timeout.
    void executor.closeTools();
  };
  const removeSignals = onStopSignals(onInterrupt);
  let ran;
  try {
    ran = await runTask(session, task, { ...opts, signal: controller.signal });
  } finally {
    removeSignals();
    for (const e of await executor.closeTools()) console.note(`warning: ${e.message}`);
  }
  return { ...ran, stopCode };
}

/** The closing report on the console, then how a replay differs from its recording. */
function report(session: Session, outcome: RunOutcome, trajectory: string): void {
  const { console } = session;
  if (console.finish) {
    console.finish({
      files: outcome.files,
      patchPath: outcome.patchPath,
      trajectory,
      usage: outcome.usage,
      costUsd: outcome.costUsd,
    });
  } else if (outcome.patchPath) {
    console.note(`patch written to ${outcome.patchPath} (${outcome.files.length} file(s) changed)`);
  }
  if (outcome.divergences) {
    for (const line of divergenceLines(outcome.divergences)) console.note(line);
  }
}

/**
 * --must-patch judges the run by `git diff` and --patch-path writes it: outside a repository no
 * run could ever pass, and the patch would be empty, so say so before the model is asked (the
 * repository is looked for where the tools act, the session's workplace).
 */
async function requireRepository(session: Session, opts: RunOptions): Promise<void> {
  const flag = opts.mustPatch ? "--must-patch" : opts.patchPath !== undefined ? "--patch-path" : "";
  if (flag === "" || await session.workplace.isRepository()) return;
  await session.executor.closeTools().catch(() => []);
  await closeWorkplace(session);
  throw new UsageError(session.workplace.notRepository(flag));
}

async function readRecording(path: string): Promise<Trajectory> {
  try {
    return await readTrajectory(path);
  } catch (e) {
    throw new UsageError(`cannot replay ${path}: ${(e as Error).message}`);
  }
}

/**
 * The task: the argument, else the file given with -f (`-f -` is stdin), else the recording's, else
 * stdin when something is piped in (`echo task | deft run`). On a terminal nothing is read: a user
 * who typed `deft run` alone gets the usage message, not a silent wait.
 */
async function resolveTask(
  task: string | undefined,
  file: string | undefined,
  recording: Trajectory | undefined,
): Promise<string> {
  if (task !== undefined && file !== undefined) {
    throw new UsageError("give the task either as an argument or with --file, not both.");
  }
  if (file === "-") return nonEmpty(await readTaskFromStdin(), "-f - read an empty stdin");
  if (file !== undefined) {
    try {
      // Any path: read as Deft's own files are (never a FIFO or device; 16 MiB at most).
      task = await readOwnText(file, { limit: 16 * 1024 * 1024, what: "the task file" });
    } catch (e) {
      throw new UsageError(`cannot read the task file ${file}: ${(e as Error).message}`);
    }
    return nonEmpty(task, `the task file ${file} is empty`);
  }
  task ??= recording?.task;
  if (task === undefined && !Deno.stdin.isTerminal()) {
    return nonEmpty(await readTaskFromStdin(), "no task argument, and stdin was empty");
  }
  return nonEmpty(task, "no task");
}

async function readTaskFromStdin(): Promise<string> {
  try {
    return await readStdin();
  } catch (e) {
    throw new UsageError(`cannot read the task from stdin: ${(e as Error).message}`);
  }
}

function nonEmpty(task: string | undefined, what: string): string {
  if (task === undefined || task.trim() === "") {
    throw new UsageError(
      `${what}: pass the task as an argument (deft run "fix the bug"), with -f FILE, ` +
        'or on stdin (echo "fix the bug" | deft run, or deft run -f - < task.md).',
    );
  }
  return task;
}
