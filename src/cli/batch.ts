/**
 * `deft batch TASKS.jsonl --out DIR`: many tasks, each in its own checkout, on this machine
 * (`--concurrency N`), as a Slurm job array (`--slurm`), or as a Kubernetes Indexed Job
 * (`--emit k8s`). `--index I` runs task I alone (what each array task does). `deft batch status
 * DIR` summarises a batch from its result files and the scheduler's view.
 *
 * Exit codes: 0 every task passed, 1 some task did not, 2 usage errors, 130 interrupted.
 */
import { basename, resolve } from "node:path";
import { indexedJob } from "../batch/k8s.ts";
import { killTagged } from "../batch/process_group.ts";
import { addSlurmJob, readManifest, writeManifest } from "../batch/manifest.ts";
import { runPool } from "../batch/pool.ts";
import { Progress, type ProgressCounts, summaryTable } from "../batch/progress.ts";
import { isFinished, isRunningHere, readResult, type TaskResult } from "../batch/results.ts";
import { runBatchTask, type TaskContext } from "../batch/run_task.ts";
import { deftArgv } from "../policy/self.ts";
import { queuedTasks, submitArray } from "../batch/slurm.ts";
import { type BatchTask, readTasks } from "../batch/tasks.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft batch`, as commander hands them over. */
export interface BatchOptions {
  out?: string;
  concurrency?: number;
  timeout?: number;
  retryFailed?: boolean;
  index?: number;
  slurm?: boolean;
  wait?: boolean;
  slurmArg?: string[];
  emit?: string;
  outputFormat?: "text" | "json";
  provider?: string;
  model?: string;
  modelBaseUrl?: string;
  configFile?: string;
  maxSteps?: number;
  sandbox?: string;
}

const DEFAULT_TIMEOUT = 1800;
const GRACE_MS = 3000;

/** Runs `deft batch`; returns the exit code. */
export async function batchCommand(
  tasksArg: string,
  dirArg: string | undefined,
  opts: BatchOptions,
): Promise<number> {
  if (tasksArg === "status") {
    const dir = dirArg ?? opts.out;
    if (!dir) throw new UsageError("deft batch status needs the batch's output directory.");
    return await statusCommand(resolve(dir), opts);
  }
  if (dirArg !== undefined) {
    throw new UsageError(`unexpected argument ${dirArg}: give the output directory with --out.`);
  }
  if (!opts.out) throw new UsageError("--out DIR is required: where each task's files go.");
  if (opts.wait && !opts.slurm) throw new UsageError("--wait only applies with --slurm.");
  if (opts.slurmArg?.length && !opts.slurm) {
    throw new UsageError("--slurm-arg only applies with --slurm.");
  }
  if (opts.emit !== undefined && opts.emit !== "k8s") {
    throw new UsageError(`--emit ${opts.emit}: the only format is k8s.`);
  }
  const tasksFile = resolve(tasksArg);
  const out = resolve(opts.out);
  const tasks = await readTasks(tasksFile);
  const concurrency = opts.concurrency ?? 1;

  if (opts.emit === "k8s") {
    const [exec, ...rest] = deftArgv();
    const deft = /^deno(\.exe)?$/i.test(basename(exec)) ? ["deno", ...rest] : [exec, ...rest];
    await writeStdout(
      indexedJob({
        tasksFile,
        out,
        total: tasks.length,
        concurrency,
        deft,
        batchArgs: passThrough(opts),
      }),
    );
    return 0;
  }

  try {
    await Deno.mkdir(out, { recursive: true });
  } catch (e) {
    throw new UsageError(`cannot create the output directory ${out}: ${(e as Error).message}`);
  }

  if (opts.index !== undefined) return await runIndex(tasks, tasksFile, out, opts);
  await writeManifest(out, tasksFile, tasks.map((t) => t.id));
  if (opts.slurm) return await runSlurm(tasks, tasksFile, out, concurrency, opts);
  return await runLocal(tasks, out, concurrency, opts);
}

/** The flags a child `deft batch --index` or `deft run` needs to behave like this one. */
function passThrough(opts: BatchOptions): string[] {
  const args = runFlags(opts);
  if (opts.timeout !== undefined) args.push("--timeout", String(opts.timeout));
  if (opts.retryFailed) args.push("--retry-failed");
  return args;
}

function runFlags(opts: BatchOptions): string[] {
  const args: string[] = [];
  if (opts.provider) args.push("-p", opts.provider);
  if (opts.model) args.push("-m", opts.model);
  if (opts.modelBaseUrl) args.push("--model-base-url", opts.modelBaseUrl);
  if (opts.configFile) args.push("--config-file", resolve(opts.configFile));
  if (opts.maxSteps !== undefined) args.push("--max-steps", String(opts.maxSteps));
  if (opts.sandbox) args.push("--sandbox", opts.sandbox);
  return args;
}

function context(out: string, opts: BatchOptions, runner: string): TaskContext {
  return {
    out,
    runTag: `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
    runner,
    timeout: opts.timeout ?? DEFAULT_TIMEOUT,
    deftArgs: runFlags(opts),
    graceMs: GRACE_MS,
  };
}

/** An AbortController that Ctrl-C, SIGTERM (scancel, kill) and SIGHUP abort. */
function interruptible(onInterrupt: () => void): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = () => {
    if (!controller.signal.aborted) onInterrupt();
    controller.abort("interrupted");
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) Deno.addSignalListener(s, handler);
  return {
    signal: controller.signal,
    dispose: () => signals.forEach((s) => Deno.removeSignalListener(s, handler)),
  };
}

async function runLocal(
  tasks: BatchTask[],
  out: string,
  concurrency: number,
  opts: BatchOptions,
): Promise<number> {
  const previous = new Map<string, TaskResult | undefined>();
  for (const t of tasks) previous.set(t.id, await readResult(out, t.id));
  const todo = tasks.filter((t) => !isFinished(previous.get(t.id), opts.retryFailed ?? false));
  const skipped = tasks.length - todo.length;

  const counts: ProgressCounts = {
    total: tasks.length,
    done: skipped,
    running: 0,
    failed: [...previous.values()].filter((r) =>
      r && !r.success && isFinished(r, false) &&
      !todo.some((t) => t.id === r.id)
    ).length,
    tokens: 0,
  };
  const progress = new Progress(counts);
  if (skipped) progress.note(`deft batch: ${skipped} task(s) already finished in ${out}; skipped`);
  progress.note(`deft batch: ${todo.length} task(s), ${concurrency} at a time, results in ${out}`);
  const { signal, dispose } = interruptible(() =>
    progress.note("interrupted: stopping the running tasks (their results are kept)")
  );
  const ctx = context(out, opts, "local");
  try {
    await runPool(todo, concurrency, ctx, signal, {
      started: () => {
        counts.running++;
        progress.update({ ...counts });
      },
      finished: (_task, result) => {
        counts.running--;
        if (result.status !== "interrupted") counts.done++;
        if (!result.success && result.status !== "interrupted") counts.failed++;
        counts.tokens += result.tokens?.total ?? 0;
        progress.finished(result, { ...counts });
      },
    });
  } finally {
    dispose();
    progress.stop();
    // Last, whatever any task of this run may still have running (one spawned during a sweep).
    if (signal.aborted) await killTagged(`${ctx.runTag}/`, true);
  }
  return await finish(tasks, out, opts, signal.aborted);
}

/** Prints the summary (table or JSON) and returns the exit code. */
async function finish(
  tasks: BatchTask[],
  out: string,
  opts: BatchOptions,
  interrupted: boolean,
  states: Map<number, string> = new Map(),
): Promise<number> {
  const rows = [];
  for (const t of tasks) {
    const result = await readResult(out, t.id);
    const state = states.get(t.index)?.toLowerCase();
    rows.push({ id: t.id, result: state ? undefined : result, state });
  }
  const allPassed = rows.every((r) => r.result?.status === "passed");
  if (opts.outputFormat === "json") {
    await writeStdout(JSON.stringify(summaryJson(out, rows, interrupted)) + "\n");
  } else {
    writeStderr(summaryTable(rows));
  }
  return interrupted ? 130 : allPassed ? 0 : 1;
}

function summaryJson(
  out: string,
  rows: { id: string; result?: TaskResult; state?: string }[],
  interrupted: boolean,
) {
  const counts: Record<string, number> = {};
  for (const r of rows) {
    const key = r.result?.status ?? r.state ?? "not_run";
    counts[key] = (counts[key] ?? 0) + 1;
  }
  const costs = rows.map((r) => r.result?.cost).filter((c): c is number => typeof c === "number");
  return {
    out,
    total: rows.length,
    interrupted,
    counts,
    tokens: rows.reduce((n, r) => n + (r.result?.tokens?.total ?? 0), 0),
    cost: costs.length ? costs.reduce((a, b) => a + b, 0) : null,
    tasks: rows.map((r) => r.result ?? { id: r.id, status: r.state ?? "not_run" }),
  };
}

/** `--index I`: one task in this process (a Slurm array task or a Kubernetes pod). */
async function runIndex(
  tasks: BatchTask[],
  tasksFile: string,
  out: string,
  opts: BatchOptions,
): Promise<number> {
  const task = tasks[opts.index!];
  if (!task) {
    throw new UsageError(
      `--index ${opts.index} is out of range: ${tasksFile} holds ${tasks.length} task(s), ` +
        `indices 0-${tasks.length - 1}.`,
    );
  }
  const previous = await readResult(out, task.id);
  if (isFinished(previous, opts.retryFailed ?? false)) {
    console.error(`deft batch: task ${task.id} already finished (${previous!.status}); skipped`);
    return previous!.success ? 0 : 1;
  }
  const job = Deno.env.get("SLURM_ARRAY_JOB_ID");
  const k8s = Deno.env.get("JOB_COMPLETION_INDEX");
  const runner = job
    ? `slurm:${job}_${Deno.env.get("SLURM_ARRAY_TASK_ID")}`
    : k8s
    ? "k8s"
    : "index";
  const { signal, dispose } = interruptible(() =>
    console.error(`deft batch: interrupted; stopping task ${task.id}`)
  );
  try {
    const result = await runBatchTask(task, context(out, opts, runner), signal);
    console.error(
      `deft batch: ${task.id} ${result.status} in ${result.duration.toFixed(1)}s` +
        (result.error ? ` — ${result.error}` : ""),
    );
    if (opts.outputFormat === "json") await writeStdout(JSON.stringify(result) + "\n");
    return result.status === "interrupted" ? 130 : result.success ? 0 : 1;
  } finally {
    dispose();
  }
}

async function runSlurm(
  tasks: BatchTask[],
  tasksFile: string,
  out: string,
  concurrency: number,
  opts: BatchOptions,
): Promise<number> {
  const manifest = await readManifest(out);
  // Tasks the scheduler still holds from an earlier submission are not submitted twice.
  const queued = await queuedTasks(manifest?.slurm_jobs ?? []);
  const todo: BatchTask[] = [];
  for (const t of tasks) {
    if (queued.has(t.index)) continue;
    if (!isFinished(await readResult(out, t.id), opts.retryFailed ?? false)) todo.push(t);
  }
  if (todo.length === 0) {
    console.error(
      queued.size
        ? `deft batch: nothing to submit; ${queued.size} task(s) are still queued or running`
        : "deft batch: every task has finished; nothing to submit",
    );
  } else {
    const jobId = await submitArray({
      tasksFile,
      out,
      indices: todo.map((t) => t.index),
      concurrency,
      deft: deftArgv(),
      batchArgs: passThrough(opts),
      slurmArgs: opts.slurmArg ?? [],
      maxTaskSeconds: Math.max(...todo.map((t) => t.timeout ?? opts.timeout ?? DEFAULT_TIMEOUT)),
    });
    await addSlurmJob(out, jobId);
    console.error(
      `deft batch: submitted job array ${jobId} (${todo.length} task(s), ` +
        `${concurrency} at a time); follow it with: deft batch status ${out}`,
    );
    if (opts.outputFormat === "json" && !opts.wait) {
      await writeStdout(JSON.stringify({ job_id: jobId, tasks: todo.map((t) => t.id) }) + "\n");
    }
  }
  if (!opts.wait) return 0;
  return await follow(tasks, out, opts);
}

/** `--wait`: polls results and the queue until none of the batch's array tasks is left. */
async function follow(tasks: BatchTask[], out: string, opts: BatchOptions): Promise<number> {
  const jobs = (await readManifest(out))?.slurm_jobs ?? [];
  const progress = new Progress(await countState(tasks, out, new Map()));
  let stopped = false;
  const { dispose } = interruptible(() => {
    stopped = true;
    progress.note("deft batch: stopped following; the job array keeps running");
  });
  try {
    const reported = new Set<string>();
    for (const t of tasks) if (await readResult(out, t.id)) reported.add(t.id);
    while (!stopped) {
      const queued = await queuedTasks(jobs);
      const counts = await countState(tasks, out, queued);
      for (const t of tasks) {
        if (queued.has(t.index) || reported.has(t.id)) continue;
        const result = await readResult(out, t.id);
        if (result) {
          reported.add(t.id);
          progress.finished(result, counts);
        }
      }
      progress.update(counts);
      if (queued.size === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    dispose();
    progress.stop();
  }
  return await finish(tasks, out, opts, stopped);
}

async function countState(
  tasks: BatchTask[],
  out: string,
  queued: Map<number, string>,
): Promise<ProgressCounts> {
  const counts: ProgressCounts = {
    total: tasks.length,
    done: 0,
    running: 0,
    pending: 0,
    failed: 0,
    tokens: 0,
  };
  for (const t of tasks) {
    const state = queued.get(t.index);
    if (state === "RUNNING" || state === "COMPLETING") counts.running++;
    else if (state) counts.pending!++;
    else {
      const r = await readResult(out, t.id);
      if (r && r.status !== "interrupted") {
        counts.done++;
        if (!r.success) counts.failed++;
      }
      counts.tokens += r?.tokens?.total ?? 0;
    }
  }
  return counts;
}

/** `deft batch status DIR`. */
async function statusCommand(out: string, opts: BatchOptions): Promise<number> {
  const manifest = await readManifest(out).catch((e) => {
    throw new UsageError(`${out}/batch.json is unreadable: ${(e as Error).message}`);
  });
  if (!manifest) {
    throw new UsageError(`${out} holds no batch (no batch.json); run deft batch TASKS --out DIR.`);
  }
  let queued = new Map<number, string>();
  let scheduler: string | null = null;
  if (manifest.slurm_jobs.length) {
    try {
      queued = await queuedTasks(manifest.slurm_jobs);
    } catch (e) {
      scheduler = (e as Error).message;
    }
  }
  const rows = [];
  for (const [index, id] of manifest.ids.entries()) {
    const result = await readResult(out, id);
    let state = queued.get(index)?.toLowerCase();
    if (!state && (!result || result.status === "interrupted") && await isRunningHere(out, id)) {
      state = "running";
    }
    rows.push({ id, result: state ? undefined : result, state });
  }
  if (opts.outputFormat === "json") {
    await writeStdout(
      JSON.stringify({
        ...summaryJson(out, rows, false),
        slurm_jobs: manifest.slurm_jobs,
        scheduler_error: scheduler,
      }) + "\n",
    );
  } else {
    if (scheduler) console.error(`warning: no scheduler view: ${scheduler}`);
    await writeStdout(summaryTable(rows));
  }
  return rows.every((r) => r.result?.status === "passed") ? 0 : 1;
}
