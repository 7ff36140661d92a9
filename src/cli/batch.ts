/**
 * `deft batch TASKS.jsonl --out DIR`: many tasks, each in its own checkout, on this machine
 * (`--concurrency N`), as a Slurm job array (`--slurm`), or as a Kubernetes Indexed Job
 * (`--emit k8s`). `--index I` runs task I alone (what each array task does). `deft batch status
 * DIR` summarises a batch from its result files and the scheduler's view.
 *
 * Exit codes: 0 every task passed, 1 some task did not, 2 usage errors, 130 interrupted.
 */
import { resolve } from "node:path";
import {
  type BatchSettings,
  followSlurm,
  k8sManifest,
  runIndex,
  runLocal,
  submitSlurm,
} from "../batch/orchestrate.ts";
import { writeManifest } from "../batch/manifest.ts";
import { summaryTable } from "../batch/progress.ts";
import { allPassed, batchStatus, summaryJson, summaryRows } from "../batch/summary.ts";
import { type BatchTask, readTasks } from "../batch/tasks.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft batch`, as commander hands them over. */
export interface BatchOptions extends BatchSettings {
  out?: string;
  index?: number;
  slurm?: boolean;
  wait?: boolean;
  emit?: string;
  outputFormat?: "text" | "json";
}

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
  if (opts.modelNameOrPath !== undefined && opts.modelNameOrPath.trim() === "") {
    throw new UsageError("--model-name-or-path must name the model (it labels every prediction).");
  }
  if (opts.emit !== undefined && opts.emit !== "k8s") {
    throw new UsageError(`--emit ${opts.emit}: the only format is k8s.`);
  }
  const tasksFile = resolve(tasksArg);
  const out = resolve(opts.out);
  const tasks = await readTasks(tasksFile, { imageTemplate: opts.imageTemplate });

  if (opts.emit === "k8s") {
    await writeStdout(k8sManifest(tasksFile, out, tasks.length, opts));
    return 0;
  }

  try {
    await Deno.mkdir(out, { recursive: true });
  } catch (e) {
    throw new UsageError(`cannot create the output directory ${out}: ${(e as Error).message}`);
  }

  if (opts.index !== undefined) return await indexCommand(tasks, tasksFile, out, opts);
  await writeManifest(out, tasksFile, tasks.map((t) => t.id));
  if (opts.slurm) return await slurmCommand(tasks, tasksFile, out, opts);
  const { interrupted } = await runLocal(tasks, out, opts);
  return await finish(tasks, out, opts, interrupted);
}

/** Prints the summary (table or JSON) and returns the exit code. */
async function finish(
  tasks: BatchTask[],
  out: string,
  opts: BatchOptions,
  interrupted: boolean,
): Promise<number> {
  const rows = await summaryRows(tasks, out);
  if (opts.outputFormat === "json") {
    await writeStdout(JSON.stringify(summaryJson(out, rows, interrupted)) + "\n");
  } else {
    writeStderr(summaryTable(rows));
  }
  return interrupted ? 130 : allPassed(rows) ? 0 : 1;
}

/** `--index I`: one task in this process (a Slurm array task or a Kubernetes pod). */
async function indexCommand(
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
  const outcome = await runIndex(task, out, opts, writeStderr);
  if ("skipped" in outcome) {
    const previous = outcome.skipped;
    writeStderr(`deft batch: task ${task.id} already finished (${previous.status}); skipped`);
    return previous.success ? 0 : 1;
  }
  const result = outcome.ran;
  writeStderr(
    `deft batch: ${task.id} ${result.status} in ${result.duration.toFixed(1)}s` +
      (result.error ? ` — ${result.error}` : ""),
  );
  if (opts.outputFormat === "json") await writeStdout(JSON.stringify(result) + "\n");
  return result.status === "interrupted" ? 130 : result.success ? 0 : 1;
}

/** `--slurm [--wait]`: submits the job array, then follows it when asked to. */
async function slurmCommand(
  tasks: BatchTask[],
  tasksFile: string,
  out: string,
  opts: BatchOptions,
): Promise<number> {
  const { jobId, submitted, queued } = await submitSlurm(tasks, tasksFile, out, opts);
  if (jobId === null) {
    writeStderr(
      queued
        ? `deft batch: nothing to submit; ${queued} task(s) are still queued or running`
        : "deft batch: every task has finished; nothing to submit",
    );
  } else {
    writeStderr(
      `deft batch: submitted job array ${jobId} (${submitted.length} task(s), ` +
        `${opts.concurrency ?? 1} at a time); follow it with: deft batch status ${out}`,
    );
    if (opts.outputFormat === "json" && !opts.wait) {
      await writeStdout(
        JSON.stringify({ job_id: jobId, tasks: submitted.map((t) => t.id) }) + "\n",
      );
    }
  }
  if (!opts.wait) return 0;
  const { stopped } = await followSlurm(tasks, out);
  return await finish(tasks, out, opts, stopped);
}

/** `deft batch status DIR`. */
async function statusCommand(out: string, opts: BatchOptions): Promise<number> {
  const { rows, slurmJobs, schedulerError } = await batchStatus(out);
  if (opts.outputFormat === "json") {
    await writeStdout(
      JSON.stringify({
        ...summaryJson(out, rows, false),
        slurm_jobs: slurmJobs,
        scheduler_error: schedulerError,
      }) + "\n",
    );
  } else {
    if (schedulerError) writeStderr(`warning: no scheduler view: ${schedulerError}`);
    await writeStdout(summaryTable(rows));
  }
  return allPassed(rows) ? 0 : 1;
}
