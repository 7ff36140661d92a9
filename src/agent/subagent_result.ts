/**
 * One child of the `task` tool while it runs (./subagent.ts): its deadline, what is to be undone
 * when it ends, and the text its parent reads afterwards.
 */
import type { AgentResult } from "./agent.ts";
import type { FileChange } from "./patch_stats.ts";

/** How a child's run ended. */
export interface ChildOutcome {
  success: boolean;
  /** Why Deft stopped it (its deadline, the session's end); absent when it ended by itself. */
  stopped?: string;
  /** Its final answer (or why it had none). */
  answer: string | null;
  steps: number;
  /** One line for the console. */
  summary: string;
}

/** Patch text longer than this is clipped in the result (the whole of it is in its file). */
export const PATCH_SHOWN_CHARS = 20_000;

/** Seconds a stopped child's run is given to come back once its tools are closed. */
const GRACE_MS = 5_000;

/** A child agent from its start to its cleanup. */
export class SubagentRun {
  readonly #controller = new AbortController();
  readonly #cleanups: (() => unknown)[] = [];
  #ended: Promise<void> | undefined;
  #stopReason: string | undefined;

  constructor(readonly description: string, readonly mode: "write" | "read") {}

  /**
   * Something to undo when the child ends (last registered, first undone); at once when it has
   * ended already (the session closed while the child was being set up).
   */
  onEnd(cleanup: () => unknown): void {
    if (this.#ended) {
      void this.#ended.then(cleanup).catch(() => {});
      return;
    }
    this.#cleanups.push(cleanup);
  }

  /**
   * Runs `start` until it ends, `ms` pass or the run is ended; past the deadline the run's
   * signal is aborted and `kill` closes what may hold it (its tools), so even a hung call ends.
   */
  async within(
    ms: number,
    start: (signal: AbortSignal) => Promise<AgentResult>,
    kill: () => Promise<void>,
  ): Promise<ChildOutcome> {
    const signal = this.#controller.signal;
    const timer = setTimeout(
      () => this.#stop(`it was stopped at its deadline of ${ms / 1000} s`),
      ms,
    );
    const aborted = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      signal.addEventListener("abort", () => resolve(undefined), { once: true });
    });
    const running = start(signal).catch((e: Error) => ({
      success: false,
      interrupted: false,
      finalResult: `the child failed: ${e.message}`,
      steps: 0,
    } as AgentResult));
    try {
      let result = await Promise.race([running, aborted]);
      if (result === undefined) {
        await kill().catch(() => {});
        let grace: ReturnType<typeof setTimeout> | undefined;
        result = await Promise.race([
          running,
          new Promise<undefined>((r) => grace = setTimeout(() => r(undefined), GRACE_MS)),
        ]);
        clearTimeout(grace);
      }
      const stopped = this.#stopReason;
      if (stopped) {
        return {
          success: false,
          stopped,
          answer: null,
          steps: result?.steps ?? 0,
          summary: `not finished: ${stopped}`,
        };
      }
      const done = result!;
      return {
        success: done.success,
        answer: done.finalResult,
        steps: done.steps,
        summary: done.success
          ? `finished in ${done.steps} step(s)`
          : `not finished: ${done.finalResult}`,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  #stop(reason: string): void {
    this.#stopReason ??= reason;
    this.#controller.abort();
  }

  /** The child's own signal: aborted at its deadline or when it is ended. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Stops the child if it still runs, saying why, and undoes what it set up (idempotent). */
  end(reason = "the session ended"): Promise<void> {
    this.#stop(reason);
    return this.#ended ??= (async () => {
      for (const cleanup of this.#cleanups.reverse()) {
        try {
          await cleanup();
        } catch { /* each cleanup says nothing; the next still runs */ }
      }
    })();
  }
}

/** What the parent reads about a child that ended. */
export function childText(what: {
  run: SubagentRun;
  sessionId: string;
  trajectory: string;
  deadlineSeconds: number;
  outcome: ChildOutcome;
  carried?: string;
  changes: FileChange[];
  patch: string;
  patchFile?: string;
  patchError?: string;
}): string {
  const { run, outcome, changes, patch } = what;
  const lines = [
    `task '${run.description}' (${run.mode}): ${outcome.summary}.`,
    `child session: ${what.sessionId}; trajectory: ${what.trajectory}`,
  ];
  if (what.carried) lines.push(`its worktree ${what.carried}; it has been removed.`);
  if (what.patchError) lines.push(`its patch could not be computed: ${what.patchError}`);
  if (run.mode === "write" && !what.patchError) {
    if (changes.length === 0) lines.push("files changed: none");
    else {
      lines.push(`files changed (${changes.length}):`);
      for (const c of changes) lines.push(`  ${c.path} +${c.added} -${c.removed}`);
    }
  }
  lines.push("", "final answer:", outcome.answer ?? "(none)");
  if (changes.length > 0) {
    const shown = patch.length > PATCH_SHOWN_CHARS
      ? `${patch.slice(0, PATCH_SHOWN_CHARS)}\n… (clipped: the whole patch is in the file)`
      : patch;
    lines.push(
      "",
      `patch ${what.sessionId} (${what.patchFile}): your tree is unchanged. To apply it, ` +
        `call this tool with {"apply": "${what.sessionId}"} (and "files": [...] for a part); ` +
        `or leave it.`,
      shown,
    );
  }
  return lines.join("\n");
}
