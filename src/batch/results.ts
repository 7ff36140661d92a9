/**
 * What a batch leaves in its output directory, and how it is written: `DIR/ID/result.json` per
 * task (atomically, temporary file then rename) and `DIR/results.jsonl`, one line per finished
 * task, appended under an exclusive file lock so writers in other processes (a local pool, Slurm
 * array tasks on other nodes) never interleave.
 */
import { readOwnText } from "../policy/own_file.ts";
import { join } from "node:path";
import { processAlive } from "./process_group.ts";

/** How a task ended. Only `interrupted` counts as unfinished. */
export type TaskStatus = "passed" | "failed" | "error" | "timeout" | "interrupted";

/** The outcome of one task, as written to result.json and results.jsonl. */
export interface TaskResult {
  id: string;
  index: number;
  status: TaskStatus;
  /** The agent completed and the test (if any) passed. */
  success: boolean;
  steps: number | null;
  tokens: { input: number; output: number; total: number } | null;
  /** US dollars, from the run summary's `cost_usd` when the provider reports prices. */
  cost: number | null;
  /** Seconds, checkout and test included. */
  duration: number;
  /** Exit code of the task's `test` command; null when there is none or it never ran. */
  test_exit_code: number | null;
  /** Exit code of `deft run`; null when it never ran or was killed. */
  exit_code: number | null;
  error: string | null;
  started_at: string;
  finished_at: string;
  /** Where the task ran: `local` or `slurm:JOB_TASK`. */
  runner: string;
  /** The repository and commit the task line names (with an image: recorded, not cloned). */
  repo?: string | null;
  commit?: string | null;
  /** The image the task ran in; null when it ran in a checkout. */
  image?: string | null;
  /** The Dockerfile the task's image was built from, when the line named one. */
  dockerfile?: string;
  /** `--docker-keep`: the id of the task's container, left for the user to inspect or remove. */
  container_id?: string;
  /** Where patch.diff came from (see PatchSource); absent in results of an older Deft. */
  patch?: PatchSource;
}

/**
 * Where a task's patch.diff came from: `run`, its `deft run` wrote it; `recovered`, the run ended
 * without writing it (killed, crashed) and the batch computed it from the workspace (the
 * checkout, or inside the container); `none`, there is no patch (it could not be computed), and
 * the task has no line in predictions.jsonl.
 */
export type PatchSource = "run" | "recovered" | "none";

/** Paths of one task's files. */
export function taskPaths(out: string, id: string) {
  const dir = join(out, id);
  return {
    dir,
    workspace: join(dir, "workspace"),
    trajectory: join(dir, "trajectory.json"),
    patch: join(dir, "patch.diff"),
    result: join(dir, "result.json"),
    log: join(dir, "deft.log"),
    running: join(dir, "running.json"),
    taskText: join(dir, "task.md"),
  };
}

/** The shared results file of a batch. */
export function resultsFile(out: string): string {
  return join(out, "results.jsonl");
}

/** The batch's predictions, in the format SWE-bench's evaluation harness reads. */
export function predictionsFile(out: string): string {
  return join(out, "predictions.jsonl");
}

/**
 * One line of `predictions.jsonl`, exactly SWE-bench's prediction format: the instance, the model
 * (a name the harness groups its reports by) and the patch ("" when the run changed nothing).
 */
export interface Prediction {
  instance_id: string;
  model_name_or_path: string;
  model_patch: string;
}

/** Appends a finished task's prediction (a task run again adds a later line; the last wins). */
export async function recordPrediction(out: string, prediction: Prediction): Promise<void> {
  const { instance_id, model_name_or_path, model_patch } = prediction;
  await appendLine(
    predictionsFile(out),
    JSON.stringify({ instance_id, model_name_or_path, model_patch }),
  );
}

/** Reads a task's result.json; undefined when absent or unreadable (the task is then rerun). */
export async function readResult(out: string, id: string): Promise<TaskResult | undefined> {
  try {
    const value = JSON.parse(
      await readOwnText(taskPaths(out, id).result, { limit: 64 << 20, what: "a task result" }),
    );
    return value && typeof value.status === "string" ? value as TaskResult : undefined;
  } catch {
    return undefined;
  }
}

/** Writes result.json atomically, then appends the same record to results.jsonl if finished. */
export async function recordResult(out: string, result: TaskResult): Promise<void> {
  const path = taskPaths(out, result.id).result;
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(result, null, 2) + "\n");
  await Deno.rename(temp, path);
  // An interrupted task is not finished: it is run again, and only its final outcome is listed.
  if (result.status !== "interrupted") await appendLine(resultsFile(out), JSON.stringify(result));
  await Deno.remove(taskPaths(out, result.id).running).catch(() => {});
}

/** Appends one line under an exclusive lock, in a single write. */
export async function appendLine(path: string, line: string): Promise<void> {
  const file = await Deno.open(path, { append: true, create: true });
  try {
    await file.lock(true);
    const bytes = new TextEncoder().encode(line + "\n");
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
  } finally {
    file.close(); // closing releases the lock
  }
}

/** Whether a task with this result is skipped on a rerun. */
export function isFinished(result: TaskResult | undefined, retryFailed: boolean): boolean {
  if (!result || result.status === "interrupted") return false;
  return retryFailed ? result.status === "passed" : true;
}

/** Marks a task as running in this process (removed when its result is recorded). */
export async function markRunning(out: string, id: string): Promise<void> {
  const marker = { pid: Deno.pid, host: Deno.hostname(), started_at: new Date().toISOString() };
  await Deno.writeTextFile(taskPaths(out, id).running, JSON.stringify(marker) + "\n");
}

/**
 * Whether a task without a result is being run right now by a local batch: its marker names a
 * process of this host that is still alive. A marker left by a killed batch does not count.
 */
export async function isRunningHere(out: string, id: string): Promise<boolean> {
  try {
    const marker = JSON.parse(
      await readOwnText(taskPaths(out, id).running, { limit: 64 << 10, what: "a running marker" }),
    );
    if (marker.host !== Deno.hostname() || !Number.isInteger(marker.pid)) return false;
    return await processAlive(marker.pid);
  } catch {
    return false;
  }
}
