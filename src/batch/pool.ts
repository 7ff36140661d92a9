/**
 * The local pool: up to N tasks at once on this machine. A task that fails, hangs past its time
 * limit or crashes is recorded and the pool goes on; an abort (Ctrl-C) interrupts the running tasks,
 * waits for each to record its result, and starts no new ones.
 */
import type { TaskResult } from "./results.ts";
import { runBatchTask, type TaskContext } from "./run_task.ts";
import type { BatchTask } from "./tasks.ts";

/** Called as tasks start and finish, for the progress display. */
export interface PoolListener {
  started(task: BatchTask): void;
  finished(task: BatchTask, result: TaskResult): void;
}

/** Runs `tasks` with at most `concurrency` at a time; resolves with the results of those that ran. */
export async function runPool(
  tasks: readonly BatchTask[],
  concurrency: number,
  ctx: TaskContext,
  signal: AbortSignal,
  listener: PoolListener,
): Promise<TaskResult[]> {
  const results: TaskResult[] = [];
  let next = 0;
  const worker = async () => {
    while (!signal.aborted && next < tasks.length) {
      const task = tasks[next++];
      listener.started(task);
      const result = await runBatchTask(task, ctx, signal).catch((e) =>
        crashed(task, ctx, e as Error)
      );
      results.push(result);
      listener.finished(task, result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  return results;
}

// runBatchTask records its own failures; this is for one that could not even do that (disk full).
function crashed(task: BatchTask, ctx: TaskContext, e: Error): TaskResult {
  const now = new Date().toISOString();
  return {
    id: task.id,
    index: task.index,
    status: "error",
    success: false,
    steps: null,
    tokens: null,
    cost: null,
    duration: 0,
    test_exit_code: null,
    exit_code: null,
    error: `could not record the task: ${e.message}`,
    started_at: now,
    finished_at: now,
    runner: ctx.runner,
  };
}
