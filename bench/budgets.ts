/**
 * Deft's latency budget: every figure of issue 39's table, as a ratio to a baseline measured in the
 * same run (so the figure means the same on a fast laptop and on a loaded 2-core CI machine), with
 * the budget the CI check holds it to and the target it is meant to reach.
 *
 * How to read a budget. `target` is where the figure should be. Every budget is what was measured
 * when it was set (`measured`) plus a margin for noise: where Deft is not at its target yet, so
 * that the check still catches a regression while the target stands; where Deft is well past it,
 * so that losing most of that lead fails too. Lower a budget when a figure improves; never raise
 * one to let a slowdown through without saying why here.
 *
 * How the check handles noise: each figure is the median of repeats, interleaved with its
 * baseline; a figure over budget is measured again with twice the repeats, and only a figure over
 * budget both times fails. So a budget sits just above the spread of today's medians (`measured`),
 * not far above it.
 */

/** The figures, by the name the bench and the check print. */
export type FigureId =
  | "task_done_start"
  | "help"
  | "sandboxed_view"
  | "str_replace_20mb_deft_tool"
  | "str_replace_20mb"
  | "tail_view_20mb"
  | "demo_replay"
  | "serve_round_trip"
  | "container_first_answer";

/** One figure's budget. */
export interface Budget {
  /** What is timed. */
  measures: string;
  /** What it is divided by, measured in the same run. */
  baseline: string;
  /** The ratio the check fails above. */
  budget: number;
  /** The ratio the issue asks for. */
  target: number;
  /** What was measured when the budget was set (2 shared cores, load 10-15). */
  measured?: string;
  /** True when the CI check measures it (a few seconds); the others run in `deno task bench`. */
  checked: boolean;
  /** Why the budget is what it is. */
  reason: string;
}

/** Every budget, in the order of the table. */
export const BUDGETS: Record<FigureId, Budget> = {
  task_done_start: {
    measures: "`deft tool task_done '{}'`, start to exit",
    baseline: "`deno run` of a hello-world with the same flags",
    budget: 4.5,
    target: 1.5,
    measured: "2.5-3.9 (hello-world 16-42 ms)",
    checked: true,
    reason: "The pipeline path's start: every `deft tool` and `deft serve` pays it. It " +
      "loads the command line, the config and the tool catalog, and probes bubblewrap (issue 39 " +
      "item 1 takes the probe off this path; lower the budget then). Medians of 11 still spread " +
      "by a third on a loaded 2-core machine; a 50 ms stall at start adds 1.2-2.5 to the ratio " +
      "(hello-world takes 20-40 ms), which this budget catches.",
  },
  help: {
    measures: "`deft --help`",
    baseline: "`deno run` of a hello-world with the same flags",
    budget: 6.5,
    target: 2,
    measured: "3.9-6.0 (hello-world 16-42 ms)",
    checked: true,
    reason: "What a user types first; it needs the command line only, yet builds every " +
      "command. Budget: the top of today's spread plus 10%: it catches a slowdown of the command " +
      "line's loading (a big module imported eagerly doubles it).",
  },
  sandboxed_view: {
    measures: "one `deft tool str_replace_based_edit_tool view`, default sandbox",
    baseline: "the same call with `--sandbox none`",
    budget: 4.2,
    target: 1.2,
    measured: "1.9-3.7 (lower under heavier load)",
    checked: false,
    reason: "The price of the sandboxed editor host for a one-off call (a second Deft start " +
      "inside bubblewrap); issue 39 item 2 aims to bring it close to the unsandboxed path. " +
      "Two Deft starts per sample make it too slow for the check.",
  },
  str_replace_20mb_deft_tool: {
    measures: "`deft tool` `str_replace` on a 20 MB file, default sandbox",
    baseline: "`python3` reading the file as text and writing it back, start to exit",
    budget: 3.8,
    target: 1.0,
    measured: "1.7-3.2",
    checked: false,
    reason: "Start-up (Deft, then its sandboxed host) dominates: the edit itself is checked by " +
      "`str_replace_20mb`. Too slow for the check (two Deft starts per sample).",
  },
  str_replace_20mb: {
    measures: "the editor's `str_replace` on a 20 MB file (in process: the edit alone)",
    baseline: "Python's own time for reading the file as text and writing it back",
    budget: 1.6,
    target: 1.0,
    measured: "0.8-1.5, lower under heavier load",
    checked: true,
    reason: "An edit reads the file once, checks it (one fast scan for zero bytes, one for " +
      "UTF-8), decodes it once to find `old_str`, splices the bytes and writes the file once. " +
      "Against Python's plain write it also flushes the file to disk and renames it into place " +
      "(crash safety: about 25 ms of a 60-70 ms edit here), which is why it is at the target " +
      "only under load. Budget: the top of today's spread plus a margin.",
  },
  tail_view_20mb: {
    measures: "the editor's `view` of the last 20 lines of a 20 MB file (in process)",
    baseline: "Python's own time for reading the file as text and writing it back",
    budget: 0.8,
    target: 0.5,
    measured: "0.32-0.66",
    checked: true,
    reason: "A view reads the file once, counting lines, decodes only the lines shown and " +
      "writes nothing, so it must stay well under a read plus a write. Budget: the top of " +
      "today's spread plus a margin.",
  },
  demo_replay: {
    measures: "`deft run --replay` of examples/demo (five tool calls)",
    baseline: "the same five calls through one `deft serve`",
    budget: 2.2,
    target: 1.2,
    measured: "1.55-1.76",
    checked: false,
    reason: "What a run adds to its tool calls (session, git baseline and patch, trajectory); " +
      "issue 39 item 2 batches its git commands. Seconds per sample: too slow for the check.",
  },
  serve_round_trip: {
    measures: "a bash `true` through one `deft serve` (default sandbox), request to reply",
    baseline: "a fresh `bash -c true` spawned from Deno",
    budget: 0.9,
    target: 0.125,
    measured: "0.47-0.73 (a fresh bash -c true: 1.3-1.8 ms)",
    checked: true,
    reason: "The persistent shell itself answers in about 0.03 ms here; a call crosses " +
      "serve's stdin, the executor, the tool worker (a message each way), the shell's control " +
      "pipe and both of its output pipes, then stdout. Budget: the top of today's spread plus " +
      "a quarter; the target needs fewer of those hops (see docs/benchmarks.md).",
  },
  container_first_answer: {
    measures: "container start to the first tool answer (`deno task bench --only container`)",
    baseline: "`docker run --rm IMAGE true`",
    budget: 2.6,
    target: 1.5,
    measured: "2.06–2.18 (before the overlapped start: 2.34–2.82 in the same runs, load 9–14)",
    checked: false,
    reason: "Needs root, docker and a private dockerd; measured by `bench/container_bench.ts`. " +
      "The start now overlaps: the likely runtime reads the image while nothing is probed, the " +
      "keeper's echo replaces the 100 ms polls, and one `exec`, sent at that echo, checks the " +
      "container and becomes the tool host (boot sent at once) while Deft finishes, so the first " +
      "link takes a loaded host. What is left is the runtime's own work (`run`, one `exec`) and Deno " +
      "with its worker starting inside: CPU a bare `docker run` does not spend, so the ratio " +
      "grows with the machine's load. Budget: the top of today's spread plus a margin; the target " +
      "needs the host in the container's own start command (src/tools/host/relay.ts would have " +
      "to keep the container alive past its first link).",
  },
};

/** The verdict on one ratio: within budget, or over it. */
export function overBudget(id: FigureId, ratio: number): boolean {
  return ratio > BUDGETS[id].budget;
}
