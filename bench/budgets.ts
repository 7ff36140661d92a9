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
  | "container_first_answer"
  | "idle_rss_interactive"
  | "idle_rss_serve"
  | "idle_rss_acp";

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
    budget: 3.0,
    target: 1.5,
    measured: "1.2-2.9, once 3.5, mostly 1.5-2.5 (medians of 11 in 25 runs, load 7-15; " +
      "before this change, interleaved with it: 1.9-2.6, once 3.8 and 4.0); CPU time " +
      "1.75-1.9x hello-world (was 2.5x)",
    checked: true,
    reason: "The pipeline path's start: every `deft tool` and `deft serve` pays it. It loads " +
      "the command line's fast path (hand-parsed: no node:util), the tool catalog, the tool " +
      "host's code (none is started for task_done) and the tool settings; no `node:` module " +
      "(src/policy/paths.ts stands in for node:path; tests/cli/tool_test.ts checks), no bwrap " +
      "probe (the default sandbox is decided when a tool first needs it), no config parser " +
      "unless a config file exists. What is left above hello-world: Deno finding deno.json and " +
      "checking deno.lock (a hello-world inside the checkout is 1.2-1.3x the one outside, " +
      "which the baseline does not pay) and ~50 modules. Budget: the top of today's medians " +
      "plus 0.3 (the check measures again before it fails); a 50 ms stall at start adds 1-3 " +
      "to the ratio, which it catches.",
  },
  help: {
    measures: "`deft --help`",
    baseline: "`deno run` of a hello-world with the same flags",
    budget: 2.4,
    target: 2,
    measured: "0.8-2.0, mostly 1.1-1.8 (medians of 11 in 12 runs; hello-world 17-59 ms, load 9-13)",
    checked: true,
    reason: "What a user types first. It is written from the command table (src/cli/help.ts) " +
      "without commander or any node: module (tests/cli/help_test.ts checks both); " +
      "commander's help was 4.0-4.7. Budget: the top of today's medians plus 0.4 (past the " +
      "target: under load the hello-world slows more than the help); it fails if the help " +
      "loads commander again (+2.5 or more), or on a 50 ms stall at start (+1.5-3).",
  },
  sandboxed_view: {
    measures: "one `deft tool str_replace_based_edit_tool view`, default sandbox",
    baseline: "the same call with `--sandbox none`",
    budget: 2.4,
    target: 1.2,
    measured: "1.4-1.8 (was 1.9-3.7, and 4.1 with a cold Deno cache)",
    checked: false,
    reason: "The price of the sandboxed editor host for a one-off call: bubblewrap (about 15 ms " +
      "of CPU for its mounts) and a second Deno start, against the unsandboxed path's worker. " +
      "The host now serves in its own process (no second isolate), the mount view is read " +
      "without bash, and Deft fills Deno's cache for the host, which cannot (a cold cache cost " +
      "~150 ms of retries per start). What is left is mostly the second start, which could " +
      "overlap Deft's own config loading. Budget: the top of the spread plus a third (two Deft " +
      "starts per sample). Too slow for the check.",
  },
  str_replace_20mb_deft_tool: {
    measures: "`deft tool` `str_replace` on a 20 MB file, default sandbox",
    baseline: "`python3` reading the file as text and writing it back, start to exit",
    budget: 2.8,
    target: 1.0,
    measured: "1.25-2.3 under load 7-10 (was 1.7-3.2; about 10% less CPU per call)",
    checked: false,
    reason: "Start-up (Deft, then its sandboxed host) dominates: the edit itself is checked by " +
      "`str_replace_20mb`, and the host runs it without the `deft` task's V8 flags (which make " +
      "the same edit about twice as slow in the unsandboxed worker). Python's own time swings " +
      "widely under load. Budget: the top of the spread plus a quarter. Too slow for the " +
      "check (two Deft starts per sample).",
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
    budget: 1.7,
    target: 1.2,
    measured: "1.10-1.39 (before the git runner: 2.09-2.27 in the same runs; load 9-15)",
    checked: false,
    reason: "What a run adds to its tool calls (session, git baseline and patch, trajectory). " +
      "A run's sandboxed git goes to one long-lived sandbox (src/policy/git_runner.ts) instead " +
      "of a bwrap per command, and a run of the demo starts git 19 times instead of 32. Budget: the top of " +
      "today's spread plus a margin, below the 2.1 of a bwrap per command, so going back to that " +
      "fails. Seconds per sample: too slow for the check.",
  },
  serve_round_trip: {
    measures: "a bash `true` through one `deft serve` (default sandbox), request to reply",
    baseline: "a fresh `bash -c true` spawned from Deno",
    budget: 0.7,
    target: 0.125,
    measured: "0.47-0.54 (a fresh bash -c true: 1.3-1.45 ms; 0.53-0.55 before, same runs)",
    checked: true,
    reason: "A call crosses serve's stdin, the executor, the tool worker (a message each way), " +
      "the shell's protocol (its control pipe and an end marker on each output pipe), then " +
      "stdout. `deno task bench --only bash` prints the layers: a bare persistent bash answers " +
      "in 0.03-0.05 ms, the protocol adds about 0.13, the session, executor and tool 0.05-0.1, " +
      "the worker's two messages 0.08 (a bare worker echo costs 0.02: the rest is the tool " +
      "running slower there), and serve's process hop about 0.1 (stdin and stdout go through " +
      "Deno's blocking-I/O threads; a bare Deno line echo costs 0.06-0.1). Each hop is a thread " +
      "waking on 2 loaded cores, so the target needs fewer hops (the worker is the Deno " +
      "permission fence around the tool, kept on purpose). Budget: the top of today's spread " +
      "plus a quarter.",
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
  // Issue 51, Deliver 4: the resident memory of an idle long-lived session (bench/memory_bench.ts).
  idle_rss_interactive: {
    measures: "VmRSS of `deft interactive` idle at its prompt (its start work done)",
    baseline: "VmRSS of an idle `deno run` (a script waiting on stdin, same flags)",
    budget: 3.5,
    target: 3.1,
    measured: "3.08-3.13 (94-95 MiB; an idle Deno 30-31 MiB), the same before and after the " +
      "start work left the path to the prompt",
    checked: false,
    reason: "What the prompt holds: the config, the model client with its SDK, the tools' host " +
      "(a worker with its own heap), the line editor; read once the start work done after the " +
      "prompt is over. Budget: the top of today's spread plus a tenth; the target is today's " +
      "figure (issue 51 asks that idle sessions be held, not that they shrink).",
  },
  idle_rss_serve: {
    measures: "VmRSS of `deft serve` idle after one call",
    baseline: "VmRSS of an idle `deno run` (a script waiting on stdin, same flags)",
    budget: 2.5,
    target: 2.2,
    measured: "2.19-2.25 (67.5-68 MiB; an idle Deno 30-31 MiB)",
    checked: false,
    reason: "The tool catalog and the tools' host worker the first call starts. Budget: the top " +
      "of today's spread plus a tenth; the target is today's figure.",
  },
  idle_rss_acp: {
    measures: "VmRSS of `deft acp` idle with one session open",
    baseline: "VmRSS of an idle `deno run` (a script waiting on stdin, same flags)",
    budget: 3.1,
    target: 2.8,
    measured: "2.75-2.83 (84-85 MiB; an idle Deno 30-31 MiB)",
    checked: false,
    reason: "The ACP SDK and one session assembled as interactive's is (config, model client, " +
      "tools' host). Budget: the top of today's spread plus a tenth; the target is today's figure.",
  },
};

/** The verdict on one ratio: within budget, or over it. */
export function overBudget(id: FigureId, ratio: number): boolean {
  return ratio > BUDGETS[id].budget;
}
