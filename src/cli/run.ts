/**
 * `deft run`: one task, start to finish. Exit codes: 0 the task completed, 1 it failed or ran out of
 * steps, 2 usage or configuration errors, 130 interrupted (Ctrl-C; 143 on SIGTERM, 129 on SIGHUP).
 * Progress goes to stderr; `--output-format json` (`--json`) prints a summary on stdout,
 * `stream-json` one event per line.
 */
import { resolve } from "node:path";
import { isGitRepo, workspacePatch } from "../agent/patch.ts";
import { gitSandbox } from "../policy/git.ts";
import { type FileChange, patchStats } from "../agent/patch_stats.ts";
import { costOf } from "../llm/prices.ts";
import type { OutputFormat } from "./console/choose.ts";
import { compareRuns, type Divergence } from "../agent/replay.ts";
import { readTrajectory, type Trajectory } from "../trajectory/recorder.ts";
import { workspaceOf } from "./context.ts";
import { UsageError, writeStdout } from "./io.ts";
import { openSession, runTask, type SessionOptions } from "./session.ts";
import { askOnTerminal } from "./approval.ts";
import { CONTINUE_MESSAGE, type ResumeOptions, resumeTarget } from "./resume.ts";
import { onStopSignals } from "./signals.ts";

/** Options of `deft run`, as commander hands them over. */
export interface RunOptions extends SessionOptions, ResumeOptions {
  file?: string;
  mustPatch?: boolean;
  patchPath?: string;
  trajectoryFile?: string;
  json?: boolean;
  outputFormat?: OutputFormat;
  replay?: string;
  replayExact?: boolean;
}

/** Runs one task; returns the exit code. */
export async function runCommand(taskArg: string | undefined, opts: RunOptions): Promise<number> {
  const format = outputFormat(opts);
  try {
    return await runFormatted(taskArg, { ...opts, outputFormat: format });
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
  const resumed = await resumeTarget(opts);
  if (resumed && recording) throw new UsageError("--replay cannot be combined with a resume.");
  const goOn = resumed && taskArg === undefined && opts.file === undefined;
  if (goOn && resumed.trajectory.success) {
    throw new UsageError(
      `session ${resumed.link.session_id} completed its task; give the next one: ` +
        `deft run "TASK" ${opts.continue ? "--continue" : `--resume ${opts.resume}`}`,
    );
  }
  const task = goOn ? CONTINUE_MESSAGE : await resolveTask(taskArg, opts.file, recording);
  if (opts.mustPatch) await requireGitRepo(opts.workingDir);
  const session = await openSession(opts, recording, {
    defaultMode: "never",
    ask: askOnTerminal,
  });
  if (resumed) {
    session.console.note(`resuming session ${resumed.link.session_id} (${resumed.path})`);
  }
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
  // SIGTERM and SIGHUP stop the run like Ctrl-C: tools closed, trajectory kept.
  const removeSignals = onStopSignals(onInterrupt);
  let outcome;
  try {
    outcome = await runTask(session, task, {
      trajectoryFile: opts.trajectoryFile,
      mustPatch: opts.mustPatch,
      signal: controller.signal,
      conversation: resumed?.conversation,
      resumedFrom: resumed?.link,
      recordedTask: task === CONTINUE_MESSAGE ? resumed?.trajectory.task : undefined,
    });
  } finally {
    removeSignals();
    for (const e of await executor.closeTools()) console.note(`warning: ${e.message}`);
  }
  const { result, recorder } = outcome;

  let patchPath: string | undefined;
  let files: FileChange[] = [];
  const sandbox = gitSandbox(session.workspace, session.config.toolSettings);
  if (opts.patchPath || await isGitRepo(session.workspace, sandbox).catch(() => true)) {
    const patch = await workspacePatch(session.workspace, { sandbox }).catch((e) => {
      console.note(`warning: could not compute the patch: ${(e as Error).message}`);
      return "";
    });
    files = await patchStats(patch);
    if (opts.patchPath) {
      patchPath = resolve(opts.patchPath);
      await Deno.writeTextFile(patchPath, patch);
    }
  }
  const provider = session.config.model.provider.provider;
  const model = session.config.model.settings.model;
  const usage = recorder.data.total_usage;
  const costUsd = costOf(usage, provider, model, session.config.prices);
  if (console.finish) {
    console.finish({
      files,
      patchPath: patchPath ?? null,
      trajectory: recorder.path,
      usage,
      costUsd,
    });
  } else if (patchPath) {
    console.note(`patch written to ${patchPath} (${files.length} file(s) changed)`);
  }
  const divergences = recording
    ? compareRuns(recording, recorder.data, { exact: opts.replayExact })
    : undefined;
  if (divergences) reportDivergences(divergences, (line) => console.note(line));

  const exitCode = result.interrupted ? stopCode : result.success && !divergences?.length ? 0 : 1;
  if (opts.outputFormat === "json" || opts.outputFormat === "stream-json") {
    const event = opts.outputFormat === "stream-json" ? { type: "run_done" } : {};
    await writeStdout(
      JSON.stringify({
        ...event,
        success: result.success,
        interrupted: result.interrupted,
        exit_code: exitCode,
        final_result: result.finalResult,
        steps: result.steps,
        provider,
        model,
        usage,
        cost_usd: costUsd,
        files_changed: files.map(({ path, added, removed }) => ({ path, added, removed })),
        execution_time: recorder.data.execution_time,
        trajectory: recorder.path,
        session_id: recorder.data.session_id,
        patch_path: patchPath ?? null,
        ...(divergences ? { divergences } : {}),
      }) + "\n",
    );
  }
  return exitCode;
}

// --must-patch judges the run by `git diff`; outside a repository no run could ever pass.
async function requireGitRepo(workingDir: string | undefined): Promise<void> {
  const workspace = await workspaceOf(workingDir);
  if (await isGitRepo(workspace)) return;
  throw new UsageError(
    `--must-patch needs a git repository, and ${workspace} is not inside one: run ` +
      "`git init && git add -A && git commit -m base` there first, or drop --must-patch.",
  );
}

async function readRecording(path: string): Promise<Trajectory> {
  try {
    return await readTrajectory(path);
  } catch (e) {
    throw new UsageError(`cannot replay ${path}: ${(e as Error).message}`);
  }
}

async function resolveTask(
  task: string | undefined,
  file: string | undefined,
  recording: Trajectory | undefined,
): Promise<string> {
  if (task !== undefined && file !== undefined) {
    throw new UsageError("give the task either as an argument or with --file, not both.");
  }
  if (file !== undefined) {
    try {
      task = await Deno.readTextFile(file);
    } catch (e) {
      throw new UsageError(`cannot read the task file ${file}: ${(e as Error).message}`);
    }
  }
  task ??= recording?.task;
  if (task === undefined || task.trim() === "") {
    throw new UsageError(
      'no task: pass it as an argument (deft run "fix the bug") or with -f FILE.',
    );
  }
  return task;
}

function reportDivergences(divergences: Divergence[], note: (s: string) => void): void {
  if (divergences.length === 0) {
    note("replay: every tool result matches the recording");
    return;
  }
  note(`replay: ${divergences.length} difference(s) from the recording:`);
  for (const d of divergences) {
    const what = d.tool ? `${d.tool} (${d.call_id}) ${d.field}` : d.field;
    const diff = d.first_difference;
    if (!diff) {
      note(`  step ${d.step}: ${what}: recorded ${clip(d.recorded)}, replayed ${clip(d.replayed)}`);
      continue;
    }
    note(`  step ${d.step}: ${what} differs at line ${diff.line}:`);
    if (diff.context !== null) note(`      ${clipLine(diff.context)}`);
    note(
      `    - ${
        diff.recorded === null ? "(no line: recorded output ends)" : clipLine(diff.recorded)
      }`,
    );
    note(
      `    + ${
        diff.replayed === null ? "(no line: replayed output ends)" : clipLine(diff.replayed)
      }`,
    );
  }
}

function clipLine(line: string): string {
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

function clip(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}
