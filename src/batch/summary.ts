/**
 * How a batch stands, read from its output directory and the scheduler: one row per task, the
 * counts the progress line shows, and the JSON summary `deft batch --output-format json` prints.
 */
import type { ProgressCounts } from "./progress.ts";
import { readManifest } from "./manifest.ts";
import { isRunningHere, readResult, type TaskResult } from "./results.ts";
import { queuedTasks } from "./slurm.ts";
import type { BatchTask } from "./tasks.ts";
import { UsageError } from "../errors.ts";

/** One task in a summary: its result, or the scheduler's state while it has none yet. */
export interface SummaryRow {
  id: string;
  result?: TaskResult;
  state?: string;
}

/** The batch's summary as JSON. */
export interface BatchSummary {
  out: string;
  total: number;
  interrupted: boolean;
  /** How many tasks have each status (or scheduler state, or `not_run`). */
  counts: Record<string, number>;
  tokens: number;
  /** US dollars; null when no task reported a cost. */
  cost: number | null;
  tasks: (TaskResult | { id: string; status: string })[];
}

/** A row per task with its result, if it has one yet. */
export async function summaryRows(tasks: readonly BatchTask[], out: string): Promise<SummaryRow[]> {
  const rows = [];
  for (const t of tasks) rows.push({ id: t.id, result: await readResult(out, t.id) });
  return rows;
}

/** Whether every row passed. */
export function allPassed(rows: readonly SummaryRow[]): boolean {
  return rows.every((r) => r.result?.status === "passed");
}

/** The summary of `rows` as JSON. */
export function summaryJson(
  out: string,
  rows: readonly SummaryRow[],
  interrupted: boolean,
): BatchSummary {
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

/** The progress counts from the results on disk and `queued` (array index → Slurm state). */
export async function countState(
  tasks: readonly BatchTask[],
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

/** What `deft batch status DIR` reports. */
export interface BatchStatus {
  rows: SummaryRow[];
  slurmJobs: string[];
  /** Why the scheduler could not be asked, when it could not. */
  schedulerError: string | null;
}

/**
 * The state of the batch in `out`: each task's result, or what the scheduler (or a process on
 * this machine) says it is doing.
 */
export async function batchStatus(out: string): Promise<BatchStatus> {
  const manifest = await readManifest(out).catch((e) => {
    throw new UsageError(`${out}/batch.json is unreadable: ${(e as Error).message}`);
  });
  if (!manifest) {
    throw new UsageError(`${out} holds no batch (no batch.json); run deft batch TASKS --out DIR.`);
  }
  let queued = new Map<number, string>();
  let schedulerError: string | null = null;
  if (manifest.slurm_jobs.length) {
    try {
      queued = await queuedTasks(manifest.slurm_jobs);
    } catch (e) {
      schedulerError = (e as Error).message;
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
  return { rows, slurmJobs: manifest.slurm_jobs, schedulerError };
}
