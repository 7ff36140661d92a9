/**
 * One task of a batch, start to finish: a fresh checkout (or, for a task with an image, a
 * container of it: see task_container.ts), `deft run` in its own process group (trajectory, patch
 * and a JSON summary), the task's test command, result.json and its line of predictions.jsonl.
 * A task that
 * passes its time limit or is interrupted gets SIGINT, so `deft run` can record where it stopped,
 * then SIGKILL after a grace period; whatever it started is swept up before the result is written.
 */
import type { RunSummary as FullSummary } from "../agent/outcome.ts";
import { isGitRepo, workspacePatch } from "../agent/patch.ts";
import { checkout } from "./checkout.ts";
import type { Container } from "../container/container.ts";
import {
  attachArgs,
  containerFallbackPatch,
  containerTestLaunch,
  openTaskContainer,
  type TaskContainer,
  type TaskContainerSettings,
} from "./task_container.ts";
import { recordTaskNetwork } from "./task_network.ts";
import { killTagged, signalGroup, spawnGroup, TASK_TAG } from "./process_group.ts";
import {
  markRunning,
  type PatchSource,
  recordPrediction,
  recordResult,
  taskPaths,
  type TaskResult,
  type TaskStatus,
} from "./results.ts";
import { deftArgv } from "../policy/self.ts";
import { markNotTrusted } from "../config/trust.ts";
import {
  deftTaskLaunch,
  groupLeader,
  type Launch,
  processPolicy,
  taskTestLaunch,
} from "../policy/process.ts";
import { defaultSandbox, type SandboxMode } from "../policy/sandbox.ts";
import type { BatchTask } from "./tasks.ts";
import { setConversation, traceparentEnv, withSpan } from "../telemetry/tracing.ts";

/** What every task of one batch process shares. */
export interface TaskContext {
  out: string;
  /** Unique per batch process; tags every process a task starts. */
  runTag: string;
  /** `local`, or `slurm:<job>_<index>`. */
  runner: string;
  /** Seconds per task when the task gives none. */
  timeout: number;
  /** Flags passed to every `deft run` (provider, model, config file, sandbox, step limit). */
  deftArgs: string[];
  /** Milliseconds between SIGINT and SIGKILL. */
  graceMs: number;
  /**
   * The sandbox and network the tasks' `deft run` is given; the task's `test` runs under the same
   * (unset: the default, workspace-write where bubblewrap works).
   */
  sandbox?: SandboxMode;
  allowNetwork?: boolean;
  /** How the containers of tasks with an image are started. */
  container: TaskContainerSettings;
  /** `--model-name-or-path`: `model_name_or_path` of every prediction. */
  modelName?: string;
  /** The model id the runs are configured with (for a task whose run never reported one). */
  configuredModel?: string;
}

/** Runs one task and records its result; never throws for a task's own failure. */
export function runBatchTask(
  task: BatchTask,
  ctx: TaskContext,
  signal: AbortSignal,
): Promise<TaskResult> {
  return withSpan(`deft.task ${task.id}`, { "deft.task.id": task.id }, async (span) => {
    const result = await runTask(task, ctx, signal);
    span.set({ "deft.task.status": result.status, "deft.task.success": result.success });
    return result;
  }, { root: true });
}

async function runTask(
  task: BatchTask,
  ctx: TaskContext,
  signal: AbortSignal,
): Promise<TaskResult> {
  const started = new Date();
  const paths = taskPaths(ctx.out, task.id);
  const tag = `${ctx.runTag}/${task.id}`;
  const limit = new AbortController();
  const timer = setTimeout(
    () => limit.abort("timeout"),
    (task.timeout ?? ctx.timeout) * 1000,
  );
  const onInterrupt = () => limit.abort("interrupted");
  signal.addEventListener("abort", onInterrupt);
  if (signal.aborted) limit.abort("interrupted");

  let exitCode: number | null = null;
  let testExit: number | null = null;
  let summary: RunSummary | undefined;
  let error: string | null = null;
  let container: TaskContainer | undefined;
  let patch: PatchSource = "run";
  try {
    await Deno.remove(paths.dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(paths.dir, { recursive: true });
    await markRunning(ctx.out, task.id);
    // The clone is the task's code, not the user's: a trusted --out folder must not trust it.
    await markNotTrusted(paths.dir);
    if (task.image !== undefined || task.dockerfile !== undefined) {
      // The repository is the one inside the image: nothing is cloned.
      container = await openTaskContainer(task, ctx.container, ctx.out);
    } else {
      await checkout(task.repo!, task.commit, paths.workspace, limit.signal);
    }
    if (task.task !== undefined) await Deno.writeTextFile(paths.taskText, task.task);

    const log = await Deno.open(paths.log, { write: true, create: true, truncate: true });
    try {
      // With tracing on, the task's run and test are children of the task's span.
      const env = { [TASK_TAG]: tag, NO_COLOR: "1", ...traceparentEnv() };
      const run = await runInGroup(
        deftTaskLaunch(
          [...deftArgv(), "run", ...runArgs(task, ctx, paths, container)],
          container ? paths.dir : paths.workspace,
          env,
        ),
        tag,
        log,
        limit.signal,
        ctx.graceMs,
      );
      exitCode = run.code;
      summary = parseSummary(run.stdout);
      setConversation(summary?.session_id);
      if (!summary && !limit.signal.aborted) {
        error = `deft run ended without a summary (exit code ${run.code}); see ${paths.log}`;
      }
      if (task.test !== undefined && summary && !limit.signal.aborted) {
        await log.write(new TextEncoder().encode(`\n--- test: ${task.test}\n`));
        const test = await runInGroup(
          container ? containerTestLaunch(container, task.test) : await hostTestLaunch(
            task.test,
            paths.workspace,
            ctx,
            env,
          ),
          tag,
          log,
          limit.signal,
          ctx.graceMs,
          true,
        );
        if (!limit.signal.aborted) testExit = test.code;
      }
    } finally {
      log.close();
    }
  } catch (e) {
    if (!limit.signal.aborted) error = (e as Error).message;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onInterrupt);
    // Twice: a process that was being spawned during the first sweep is caught by the second.
    if (await killTagged(tag) > 0 || limit.signal.aborted) {
      await new Promise((r) => setTimeout(r, 300));
      await killTagged(tag);
    }
    if (container) {
      // A run that was killed or crashed never wrote its patch: take it from inside, then the
      // container goes, whatever happened.
      if (!await exists(paths.patch) && await exists(paths.dir)) {
        patch = await writeFallback(paths.patch, await containerFallbackPatch(container));
      }
      await container.close().catch((e) => {
        error ??= (e as Error).message;
      });
      // Its proxy last (the test may have used it); its decisions go into the trajectory.
      if (container.network) {
        await container.network.close();
        const lost = await recordTaskNetwork(paths.trajectory, container.network.records);
        // Said in the task's log; the task's own outcome stands.
        if (lost) {
          await Deno.writeTextFile(paths.log, `\n--- ${lost}\n`, { append: true }).catch(() => {});
        }
      }
    }
  }

  // A run that was killed or crashed never wrote its patch: take it from the checkout (which
  // must still be a repository: workspacePatch reads "not one" as "no change").
  if (!container && !await exists(paths.patch) && await exists(paths.workspace)) {
    const computed = await isGitRepo(paths.workspace).catch(() => false)
      ? await workspacePatch(paths.workspace).catch(() => undefined)
      : undefined;
    patch = await writeFallback(paths.patch, computed);
  }
  if (patch === "run" && !await exists(paths.patch)) patch = "none";

  let status: TaskStatus;
  const reason = limit.signal.aborted ? String(limit.signal.reason) : undefined;
  if (reason === "timeout") {
    status = "timeout";
    error = `timed out after ${task.timeout ?? ctx.timeout} s`;
  } else if (reason === "interrupted") {
    status = "interrupted";
    error = "interrupted before the task finished";
  } else if (error !== null || !summary) {
    status = "error";
  } else if (!summary.success) {
    status = "failed";
    error = summary.interrupted
      ? "the run was interrupted"
      : summary.budget?.stopped
      ? summary.final_result ?? "stopped at a budget cap"
      : "the agent did not complete the task";
  } else if (testExit !== null && testExit !== 0) {
    status = "failed";
    error = `the test command exited with ${testExit}`;
  } else {
    status = "passed";
  }
  const usage = summary?.usage;
  const finished = new Date();
  const result: TaskResult = {
    id: task.id,
    index: task.index,
    status,
    success: status === "passed",
    steps: summary?.steps ?? null,
    tokens: usage
      ? {
        input: usage.input_tokens ?? 0,
        output: usage.output_tokens ?? 0,
        total: (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0),
      }
      : null,
    cost: typeof summary?.cost_usd === "number" ? summary.cost_usd : null,
    duration: (finished.getTime() - started.getTime()) / 1000,
    test_exit_code: testExit,
    exit_code: exitCode,
    error,
    started_at: started.toISOString(),
    finished_at: finished.toISOString(),
    runner: ctx.runner,
    repo: task.repo ?? null,
    commit: task.commit ?? null,
    image: task.image ?? null,
    ...(task.dockerfile !== undefined ? { dockerfile: task.dockerfile } : {}),
    ...(container?.kept ? { container_id: container.id } : {}),
    patch,
  };
  await Deno.mkdir(paths.dir, { recursive: true });
  // The prediction first: a task with a result is finished, and so is its prediction. A task
  // without a patch has none: an empty model_patch would claim the run changed nothing.
  if (status !== "interrupted" && patch !== "none") {
    await recordPrediction(ctx.out, {
      instance_id: task.instance_id ?? task.id,
      model_name_or_path: ctx.modelName ?? summary?.model ?? ctx.configuredModel ?? "deft",
      model_patch: await Deno.readTextFile(paths.patch).catch(() => ""),
    });
  }
  await recordResult(ctx.out, result);
  return result;
}

/**
 * Writes the patch the batch computed for a run that ended without writing its own; a patch that
 * could not be computed is not written (an empty file would read as "nothing changed").
 */
async function writeFallback(path: string, patch: string | undefined): Promise<PatchSource> {
  if (patch === undefined) return "none";
  await Deno.writeTextFile(path, patch);
  return "recovered";
}

/** The task's `test` on the host: the model's code now, so it runs confined like its shell. */
async function hostTestLaunch(
  command: string,
  workspace: string,
  ctx: TaskContext,
  env: Record<string, string>,
): Promise<Launch> {
  const policy = processPolicy(await Deno.realPath(workspace), {
    sandbox: ctx.sandbox ?? defaultSandbox().mode,
    allowNetwork: ctx.allowNetwork,
  });
  const confined = taskTestLaunch(policy, command, env);
  return groupLeader([confined.program, ...confined.args], confined.cwd, confined.env);
}

/** The part of `deft run --json`'s summary a batch reads (an older Deft may leave some out). */
type RunSummary = Pick<FullSummary, "success"> & Partial<FullSummary>;

function runArgs(
  task: BatchTask,
  ctx: TaskContext,
  paths: ReturnType<typeof taskPaths>,
  container: Container | undefined,
) {
  const args = [
    "--json",
    ...(container ? attachArgs(container) : ["-w", paths.workspace]),
    "-t",
    paths.trajectory,
    "--patch-path",
    paths.patch,
    ...ctx.deftArgs,
  ];
  if (task.task !== undefined) args.push("-f", paths.taskText);
  if (task.replay !== undefined) args.push("--replay", task.replay);
  if (task.max_steps !== undefined) args.push("--max-steps", String(task.max_steps));
  return args;
}

function parseSummary(stdout: string): RunSummary | undefined {
  const last = stdout.trim().split("\n").pop();
  if (!last) return undefined;
  try {
    const value = JSON.parse(last);
    return value && typeof value.success === "boolean" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `launch` (the leader of its own session) to its end; stderr (and stdout when `logStdout`)
 * go to `log`.
 */
async function runInGroup(
  launch: Launch,
  tag: string,
  log: Deno.FsFile,
  signal: AbortSignal,
  graceMs: number,
  logStdout = false,
): Promise<{ code: number | null; stdout: string }> {
  if (signal.aborted) return { code: null, stdout: "" };
  const child = spawnGroup(launch, "piped");
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    signalGroup(child.pid, "SIGINT");
    killTimer = setTimeout(() => signalGroup(child.pid, "SIGKILL"), graceMs);
  };
  signal.addEventListener("abort", stop);
  const copy = async (stream: ReadableStream<Uint8Array>, keep: boolean) => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream) {
      if (keep) chunks.push(chunk);
      else await log.write(chunk);
    }
    return new TextDecoder().decode(concat(chunks));
  };
  try {
    const streams = Promise.all([copy(child.stdout, !logStdout), copy(child.stderr, false)]);
    const status = await child.status;
    // Something the task left running may still hold the pipes open: end it, then read on.
    let wait: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) =>
      wait = setTimeout(() => resolve(undefined), 1000)
    );
    const drained = await Promise.race([streams, late]);
    clearTimeout(wait);
    if (!drained) {
      signalGroup(child.pid, "SIGKILL");
      await killTagged(tag);
    }
    const [stdout] = drained ?? await streams;
    return { code: status.signal ? null : status.code, stdout };
  } finally {
    signal.removeEventListener("abort", stop);
    clearTimeout(killTimer);
    signalGroup(child.pid, "SIGKILL");
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
