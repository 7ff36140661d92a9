/**
 * What a finished run leaves behind: the workspace's patch and its per-file stats, the cost, how
 * a replay differs from its recording, and the summary `deft run --json` prints (and `deft batch`
 * reads back).
 */
import { resolve } from "node:path";
import type { AgentResult } from "./agent.ts";
import { type FileChange, patchStats } from "./patch_stats.ts";
import { compareRuns, type Divergence } from "./replay.ts";
import { type Session, sessionPatch } from "./session.ts";
import { costOf } from "../llm/prices.ts";
import type { LLMUsage } from "../llm/types.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { NetworkRecord, Trajectory, TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { BudgetRecord } from "./budget.ts";

/** The summary of one `deft run`: the `--json` output and the `run_done` event of stream-json. */
export interface RunSummary {
  success: boolean;
  interrupted: boolean;
  exit_code: number;
  final_result: string | null;
  steps: number;
  provider: string;
  model: string;
  usage: LLMUsage;
  /** US dollars; null when the model's prices are unknown. */
  cost_usd: number | null;
  files_changed: { path: string; added: number; removed: number }[];
  execution_time: number;
  trajectory: string;
  session_id?: string;
  patch_path: string | null;
  /** Each gated call's approval decision, in call order: who let it through or refused it. */
  approvals: RunApproval[];
  /** Only for a replay: where its tool results differ from the recording. */
  /** A hook's `continue: false` stopped the run: event, hook, config file, `stopReason`. */
  stopped_by_hook?: { event: string; hook: string; source?: string; reason: string };
  /** The budget caps, the spend against them, and the cap that stopped the run (exit code 3). */
  budget?: BudgetRecord;
  divergences?: Divergence[];
  /**
   * Each destination the network proxy allowed or refused (host, port, outcome; never a path),
   * as the trajectory records them; absent when there was none.
   */
  network?: NetworkRecord[];
}

/** One call's approval decision in the summary: the call, then the trajectory's record. */
export type RunApproval = { step: number; call_id: string; tool: string } & ApprovalDecision;

/** The approval decisions a trajectory records, in call order. */
export function runApprovals(trajectory: Trajectory): RunApproval[] {
  return trajectory.agent_steps.flatMap((step) =>
    step.tool_results.flatMap((r) =>
      r.approval
        ? [{ step: step.step_number, call_id: r.call_id, tool: r.name, ...r.approval }]
        : []
    )
  );
}

/** A run's results beyond the agent's own answer. */
export interface RunOutcome {
  /** The files the run changed (empty outside a git repository). */
  files: FileChange[];
  /** Where the patch was written, when asked to. */
  patchPath: string | null;
  /** Why the patch could not be computed (then nothing was written and `files` is empty). */
  patchError?: string;
  costUsd: number | null;
  usage: LLMUsage;
  /** Set for a replay. */
  divergences?: Divergence[];
}

/** What to compute besides the patch stats. */
export interface OutcomeOptions {
  /**
   * Write the patch here (`--patch-path`). Outside a git repository (the command checks before the
   * run, but the model may remove `.git`) nothing is written and the console says why.
   */
  patchPath?: string;
  /** The recording a replayed run is compared with. */
  recording?: Trajectory;
  /** Compare replayed tool output byte for byte. */
  replayExact?: boolean;
}

/**
 * Computes the patch (written to `opts.patchPath` when given), its stats, the cost and, for a
 * replay, the divergences. A patch that cannot be computed is reported as a warning on the
 * session's console and counts as empty.
 */
export async function runOutcome(
  session: Session,
  recorder: TrajectoryRecorder,
  opts: OutcomeOptions = {},
): Promise<RunOutcome> {
  const { config, console, workspace } = session;
  let patchPath: string | null = null;
  let files: FileChange[] = [];
  let patchError: string | undefined;
  // A git that had to be stopped counts as a repository: computing the patch then says why.
  if (await session.workplace.isRepository().catch(() => true)) {
    const patch = await sessionPatch(session).catch((e) => {
      patchError = (e as Error).message;
      console.note(`warning: could not compute the patch: ${patchError}`);
      return "";
    });
    // A file too large to read is named in the patch's first lines (patch.ts `leftOutLines`).
    for (const line of patch.match(/^# Deft left .*$/gm) ?? []) {
      console.note(`warning: ${line.slice(2)}`);
    }
    files = await patchStats(patch);
    if (opts.patchPath && patchError === undefined) {
      patchPath = resolve(opts.patchPath);
      await Deno.writeTextFile(patchPath, patch);
    } else if (opts.patchPath) {
      // An empty file would read as "the run changed nothing".
      console.note(`warning: no patch written to ${resolve(opts.patchPath)}`);
    }
  } else if (opts.patchPath) {
    // An empty file would read as "the run changed nothing", which nobody can know here.
    console.note(
      `warning: ${workspace} is not a git repository (any more), so there is no patch: ` +
        `nothing written to ${resolve(opts.patchPath)}`,
    );
  }
  const usage = recorder.data.total_usage;
  const costUsd = costOf(
    usage,
    config.model.provider.provider,
    config.model.settings.model,
    config.prices,
  );
  const divergences = opts.recording
    ? compareRuns(opts.recording, recorder.data, { exact: opts.replayExact })
    : undefined;
  return { files, patchPath, patchError, costUsd, usage, divergences };
}

/** The run's summary, with the exit code the command settled on. */
export function runSummary(
  session: Session,
  result: AgentResult,
  recorder: TrajectoryRecorder,
  outcome: RunOutcome,
  exitCode: number,
): RunSummary {
  return {
    success: result.success,
    interrupted: result.interrupted,
    exit_code: exitCode,
    final_result: result.finalResult,
    steps: result.steps,
    provider: session.config.model.provider.provider,
    model: session.config.model.settings.model,
    usage: outcome.usage,
    cost_usd: outcome.costUsd,
    files_changed: outcome.files.map(({ path, added, removed }) => ({ path, added, removed })),
    execution_time: recorder.data.execution_time,
    trajectory: recorder.path,
    session_id: recorder.data.session_id,
    patch_path: outcome.patchPath,
    approvals: runApprovals(recorder.data),
    ...(outcome.divergences ? { divergences: outcome.divergences } : {}),
    ...(recorder.data.network?.length ? { network: recorder.data.network } : {}),
    ...(result.stoppedByHook ? { stopped_by_hook: result.stoppedByHook } : {}),
    ...(session.budget ? { budget: session.budget.record() } : {}),
  };
}
