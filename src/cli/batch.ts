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
import { isFinished, readResult } from "../batch/results.ts";
import { summaryTable } from "../batch/progress.ts";
import { allPassed, batchStatus, summaryJson, summaryRows } from "../batch/summary.ts";
import { applyDefaultImage, type BatchTask, readTasks } from "../batch/tasks.ts";
import {
  checkBatchContainerFlags,
  hasDefaultImage,
  prepareDefaultImage,
} from "../batch/default_image.ts";
import { UsageError, warnStderr, writeStderr, writeStdout } from "./io.ts";
import { BUDGET_EXIT_CODE } from "../agent/budget.ts";

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
  checkBatchContainerFlags(opts);
  const tasksFile = resolve(tasksArg);
  const out = resolve(opts.out);
  const tasks = await readTasks(tasksFile, {
    imageTemplate: opts.imageTemplate,
    defaultImage: hasDefaultImage(opts),
  });

  if (opts.emit === "k8s") {
    await writeStdout(k8sManifest(tasksFile, out, tasks.length, opts));
    return 0;
  }

  try {
    await Deno.mkdir(out, { recursive: true });
  } catch (e) {
    throw new UsageError(`cannot create the output directory ${out}: ${(e as Error).message}`);
  }

  if (opts.index === undefined) await writeManifest(out, tasksFile, tasks.map((t) => t.id));
  // Each array task names, builds or loads the default image on its node (see passThrough).
  if (opts.slurm && opts.index === undefined) {
    return await slurmCommand(tasks, tasksFile, out, opts);
  }
  return await withDefaultImage(tasks, out, opts, async (tasks, settings) => {
    if (opts.index !== undefined) return await indexCommand(tasks, tasksFile, out, settings);
    const { interrupted, kept } = await runLocal(tasks, out, settings);
    reportKept(kept, settings);
    return await finish(tasks, out, opts, interrupted);
  });
}

/**
 * Runs `body` with the batch's default image ready and in every line that names none; what was
 * built or loaded for it goes afterwards, whatever the end (a Ctrl-C or SIGTERM ends the tasks,
 * then this), unless `--docker-keep`.
 */
async function withDefaultImage(
  tasks: BatchTask[],
  out: string,
  opts: BatchOptions,
  body: (tasks: BatchTask[], settings: BatchOptions) => Promise<number>,
): Promise<number> {
  if (!hasDefaultImage(opts)) return await body(tasks, opts);
  // Only the tasks this process runs need it: a finished task, one --index does not name or one
  // with an image of its own makes no build or load.
  const mine = opts.index !== undefined ? tasks.slice(opts.index, opts.index + 1) : tasks;
  let needed = false;
  for (const t of mine) {
    if (t.image !== undefined || t.dockerfile !== undefined) continue;
    if (!isFinished(await readResult(out, t.id), opts.retryFailed ?? false)) needed = true;
  }
  if (!needed && opts.dockerImage === undefined) return await body(tasks, opts);
  const made = await prepareDefaultImage(opts, warnStderr);
  const settings = { ...opts, containerRuntime: made.runtime ?? opts.containerRuntime };
  let code: number | undefined;
  try {
    code = await body(applyDefaultImage(tasks, made.image!), settings);
  } finally {
    await made.remove().catch((e) => {
      warnStderr(`deft batch: ${(e as Error).message}`);
      // Only when the body ended on its own: an error of its own goes first.
      if (code === 0) code = 1;
    });
  }
  return code;
}

/** `--docker-keep`: the ids of the containers the tasks left, on stderr. */
function reportKept(kept: string[], opts: BatchOptions): void {
  if (!opts.dockerKeep) return;
  warnStderr(
    kept.length
      ? `deft batch: kept ${kept.length} container(s): ${kept.join(" ")}`
      : "deft batch: no container was kept (no task started one)",
  );
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
  writeStderr((await import("./report.ts")).reportHint(out));
  if (interrupted) return 130;
  if (allPassed(rows)) return 0;
  // A task stopped at a budget cap (the batch's, or its own): the batch says so by its code.
  return rows.some((r) => r.result?.exit_code === BUDGET_EXIT_CODE) ? BUDGET_EXIT_CODE : 1;
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
  reportKept(result.container_id ? [result.container_id] : [], opts);
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
  if (opts.dockerKeep) {
    const kept: string[] = [];
    for (const t of submitted) {
      const id = (await readResult(out, t.id))?.container_id;
      if (id) kept.push(id);
    }
    // On the nodes that ran them.
    reportKept(kept, opts);
  }
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
