/**
 * Running a batch: the local pool with its progress line, one task by index (what each Slurm
 * array task or Kubernetes pod does), submitting the rest as a Slurm job array and following it,
 * and the Kubernetes manifest. Each task runs in its own checkout (see run_task.ts); finished tasks
 * are skipped, so a batch can be run again after an interruption.
 */
import { basename, resolve } from "node:path";
import { indexedJob } from "./k8s.ts";
import { addSlurmJob, readManifest } from "./manifest.ts";
import { runPool } from "./pool.ts";
import { killTagged } from "./process_group.ts";
import { onNetworkDecision } from "../policy/network/decisions.ts";
import { Progress, type ProgressCounts } from "./progress.ts";
import { isFinished, readResult, type TaskResult } from "./results.ts";
import { runBatchTask, type TaskContext } from "./run_task.ts";
import { queuedTasks, submitArray } from "./slurm.ts";
import { countState } from "./summary.ts";
import type { BatchTask } from "./tasks.ts";
import { readEnv } from "../env.ts";
import { loadConfig, type LoadedConfig } from "../config/load.ts";
import { resolveRunConfig } from "../config/resolve.ts";
import { resolveToolSettings } from "../config/tool_settings.ts";
import type { SandboxMode } from "../policy/sandbox.ts";
import { deftArgv } from "../policy/self.ts";
import { withSpan } from "../telemetry/tracing.ts";
import { batchLedger, budgetFlags } from "./budget.ts";
import type { BudgetFlags } from "../agent/budget.ts";

/** How a batch runs: its own limits, and the flags every task's `deft run` gets. */
export interface BatchSettings extends BudgetFlags {
  /** Tasks at once (with Slurm: array tasks at once); default 1. */
  concurrency?: number;
  /** Seconds per task when the task gives none; default 1800. */
  timeout?: number;
  /** Run failed tasks again (finished ones are always skipped). */
  retryFailed?: boolean;
  provider?: string;
  model?: string;
  modelBaseUrl?: string;
  configFile?: string;
  /** `--approval-rules`: each task's `deft run` gets the policy file. */
  approvalRules?: string;
  /** `--approve-asks`: each task's `deft run` gets it (what an ask is about runs unasked). */
  approveAsks?: boolean;
  maxSteps?: number;
  sandbox?: SandboxMode;
  /** Extra sbatch options. */
  slurmArg?: string[];
  /** `docker` or `podman` for the tasks with an image (unset: the config's, else detected). */
  containerRuntime?: "docker" | "podman";
  /** Turns a SWE-bench line's instance id into its image (tasks.ts `checkImageTemplate`). */
  imageTemplate?: string;
  /** `model_name_or_path` in predictions.jsonl (default: the model each run names). */
  modelNameOrPath?: string;
  /** `--docker-image`: the image of every line that names none. */
  dockerImage?: string;
  /** `--dockerfile-path`: built once at the batch's start into the default image. */
  dockerfilePath?: string;
  /** `--docker-image-file`: loaded once at the batch's start; the default image. */
  dockerImageFile?: string;
  /** `--docker-keep`: the tasks' containers (and a built or loaded image) stay. */
  dockerKeep?: boolean;
  /** `--docker-container-id`: refused (a batch starts one container per task). */
  dockerContainerId?: string;
}

const DEFAULT_TIMEOUT = 1800;
const GRACE_MS = 3000;

/** The flags a child `deft batch --index` needs to behave like this batch. */
function passThrough(settings: BatchSettings): string[] {
  const args = [...runFlags(settings), ...budgetFlags(settings)];
  if (settings.timeout !== undefined) args.push("--timeout", String(settings.timeout));
  if (settings.retryFailed) args.push("--retry-failed");
  // Each array task (pod) starts its tasks' containers where it runs, as this batch would.
  if (settings.containerRuntime) args.push("--container-runtime", settings.containerRuntime);
  if (settings.imageTemplate !== undefined) args.push("--image-template", settings.imageTemplate);
  if (settings.modelNameOrPath !== undefined) {
    args.push("--model-name-or-path", settings.modelNameOrPath);
  }
  // The default image: named, or built/loaded by each array task on its node (an image made on
  // the submitting host is not in the nodes' runtimes).
  if (settings.dockerImage !== undefined) args.push("--docker-image", settings.dockerImage);
  if (settings.dockerfilePath !== undefined) {
    args.push("--dockerfile-path", resolve(settings.dockerfilePath));
  }
  if (settings.dockerImageFile !== undefined) {
    args.push("--docker-image-file", resolve(settings.dockerImageFile));
  }
  if (settings.dockerKeep) args.push("--docker-keep");
  return args;
}

/** The flags each task's `deft run` gets. */
function runFlags(settings: BatchSettings): string[] {
  const args: string[] = [];
  if (settings.provider) args.push("-p", settings.provider);
  if (settings.model) args.push("-m", settings.model);
  if (settings.modelBaseUrl) args.push("--model-base-url", settings.modelBaseUrl);
  if (settings.configFile) args.push("--config-file", resolve(settings.configFile));
  if (settings.maxSteps !== undefined) args.push("--max-steps", String(settings.maxSteps));
  if (settings.sandbox) args.push("--sandbox", settings.sandbox);
  if (settings.approvalRules) args.push("--approval-rules", resolve(settings.approvalRules));
  if (settings.approveAsks) args.push("--approve-asks");
  return args;
}

/**
 * What every task of this batch process shares. The sandbox is resolved here once, the way each
 * task's `deft run` resolves it (flag > DEFT_SANDBOX > the batch's config file > the default),
 * and handed to both the run (as `--sandbox`) and the task's test, so they agree.
 */
async function context(
  out: string,
  settings: BatchSettings,
  runner: string,
): Promise<TaskContext> {
  const loaded = await loadConfig(settings.configFile);
  const { config } = loaded;
  const tools = resolveToolSettings(config, { sandbox: settings.sandbox });
  const resolved = { ...settings, sandbox: tools.sandbox };
  const ledger = await batchLedger(out, settings, loaded);
  return {
    out,
    runTag: `${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`,
    runner,
    timeout: settings.timeout ?? DEFAULT_TIMEOUT,
    deftArgs: [...runFlags(resolved), ...(ledger ? ["--budget-ledger", ledger] : [])],
    graceMs: GRACE_MS,
    sandbox: tools.sandbox,
    allowNetwork: tools.allowNetwork,
    container: {
      runtime: settings.containerRuntime ?? config.container.runtime,
      network: config.container.allow_network,
      // `allow_network` (the whole network) leaves no list: resolveToolSettings drops it then.
      networkList: tools.network,
      memory: config.container.memory,
      pidsLimit: config.container.pids_limit,
      podmanRuntime: config.container.podman_runtime,
      keep: settings.dockerKeep ?? false,
    },
    modelName: settings.modelNameOrPath,
    configuredModel: configuredModel(loaded, settings),
  };
}

/** The model id the tasks' runs are configured with; undefined when none resolves. */
function configuredModel(loaded: LoadedConfig, settings: BatchSettings): string | undefined {
  try {
    const overrides = {
      provider: settings.provider,
      model: settings.model,
      modelBaseUrl: settings.modelBaseUrl,
    };
    return resolveRunConfig(loaded, overrides, readEnv, false).model.settings.model;
  } catch {
    return settings.model;
  }
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

/** The Kubernetes Indexed Job that runs the batch, one pod per task, as YAML. */
export function k8sManifest(
  tasksFile: string,
  out: string,
  total: number,
  settings: BatchSettings,
): string {
  const [exec, ...rest] = deftArgv();
  // A pod runs `deno` from its PATH, not this machine's path to it.
  const deft = /^deno(\.exe)?$/i.test(basename(exec)) ? ["deno", ...rest] : [exec, ...rest];
  return indexedJob({
    tasksFile,
    out,
    total,
    concurrency: settings.concurrency ?? 1,
    deft,
    batchArgs: passThrough(settings),
  });
}

/**
 * Runs the unfinished tasks here, `concurrency` at a time, with a progress line on stderr. Ctrl-C
 * (SIGTERM, SIGHUP) stops the running tasks, whose results are kept. Returns whether it was
 * interrupted.
 */
export async function runLocal(
  tasks: BatchTask[],
  out: string,
  settings: BatchSettings,
): Promise<{ interrupted: boolean; kept: string[] }> {
  const concurrency = settings.concurrency ?? 1;
  const previous = new Map<string, TaskResult | undefined>();
  for (const t of tasks) previous.set(t.id, await readResult(out, t.id));
  const todo = tasks.filter((t) => !isFinished(previous.get(t.id), settings.retryFailed ?? false));
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
  const ctx = await context(out, settings, "local");
  const kept: string[] = [];
  // The task containers' proxy is this process's: its refusals are said here.
  const unwatch = onNetworkDecision((d) => {
    if (!d.allowed) progress.note(`network: blocked ${d.host}:${d.port} (${d.reason})`);
  });
  try {
    await withSpan(
      "deft.batch",
      { "deft.batch.tasks": todo.length },
      () =>
        runPool(todo, concurrency, ctx, signal, {
          started: () => {
            counts.running++;
            progress.update({ ...counts });
          },
          finished: (_task, result) => {
            counts.running--;
            if (result.status !== "interrupted") counts.done++;
            if (!result.success && result.status !== "interrupted") counts.failed++;
            counts.tokens += result.tokens?.total ?? 0;
            if (result.container_id) kept.push(result.container_id);
            progress.finished(result, { ...counts });
          },
        }),
      { root: true },
    );
  } finally {
    unwatch();
    dispose();
    progress.stop();
    // Last, whatever any task of this run may still have running (one spawned during a sweep).
    if (signal.aborted) await killTagged(`${ctx.runTag}/`, true);
  }
  return { interrupted: signal.aborted, kept };
}

/** How one task run by index ended: run now, or skipped as already finished. */
export type IndexOutcome = { ran: TaskResult } | { skipped: TaskResult };

/**
 * Runs `task` in this process, as a Slurm array task or a Kubernetes pod does, unless it already
 * finished. The runner recorded in its result comes from the scheduler's environment. `note`
 * hears about an interruption.
 */
export async function runIndex(
  task: BatchTask,
  out: string,
  settings: BatchSettings,
  note: (line: string) => void,
): Promise<IndexOutcome> {
  const previous = await readResult(out, task.id);
  if (previous && isFinished(previous, settings.retryFailed ?? false)) return { skipped: previous };
  const job = readEnv("SLURM_ARRAY_JOB_ID");
  const runner = job
    ? `slurm:${job}_${readEnv("SLURM_ARRAY_TASK_ID")}`
    : readEnv("JOB_COMPLETION_INDEX")
    ? "k8s"
    : "index";
  const { signal, dispose } = interruptible(() =>
    note(`deft batch: interrupted; stopping task ${task.id}`)
  );
  try {
    return { ran: await runBatchTask(task, await context(out, settings, runner), signal) };
  } finally {
    dispose();
  }
}

/** What a Slurm submission did. */
export interface Submission {
  /** The new job array's id; null when there was nothing to submit. */
  jobId: string | null;
  /** The tasks submitted. */
  submitted: BatchTask[];
  /** Tasks an earlier submission still holds (queued or running), not submitted again. */
  queued: number;
}

/**
 * Submits the unfinished tasks as a Slurm job array and records it in the batch's manifest.
 * Tasks the scheduler still holds from an earlier submission are not submitted twice.
 */
export async function submitSlurm(
  tasks: BatchTask[],
  tasksFile: string,
  out: string,
  settings: BatchSettings,
): Promise<Submission> {
  const manifest = await readManifest(out);
  const queued = await queuedTasks(manifest?.slurm_jobs ?? []);
  const todo: BatchTask[] = [];
  for (const t of tasks) {
    if (queued.has(t.index)) continue;
    if (!isFinished(await readResult(out, t.id), settings.retryFailed ?? false)) todo.push(t);
  }
  if (todo.length === 0) return { jobId: null, submitted: [], queued: queued.size };
  // The ledger is made at submission: the batch's wall time counts from here, on every node.
  await batchLedger(out, settings, await loadConfig(settings.configFile));
  const jobId = await submitArray({
    tasksFile,
    out,
    indices: todo.map((t) => t.index),
    concurrency: settings.concurrency ?? 1,
    deft: deftArgv(),
    batchArgs: passThrough(settings),
    slurmArgs: settings.slurmArg ?? [],
    maxTaskSeconds: Math.max(
      ...todo.map((t) => t.timeout ?? settings.timeout ?? DEFAULT_TIMEOUT),
    ),
  });
  await addSlurmJob(out, jobId);
  return { jobId, submitted: todo, queued: queued.size };
}

/**
 * Polls the results and the queue, with a progress line, until none of the batch's array tasks
 * is left. Ctrl-C stops following (the array keeps running); returns whether it did.
 */
export async function followSlurm(
  tasks: BatchTask[],
  out: string,
): Promise<{ stopped: boolean }> {
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
  return { stopped };
}
