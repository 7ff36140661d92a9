/**
 * Deft's latency budget: every figure of issue 39's table, as a ratio to a baseline measured in the
 * same run (so the figure means the same on a fast laptop and on a loaded 2-core CI machine), with
 * the budget the CI check holds it to and the target it is meant to reach. The one-off sandboxed
 * calls and the container's start are held to the floor this design has (issue 51's decision: no
 * daemon), a sum of baselines measured in the same run (bench/floors.ts).
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
    baseline: "its floor: the same call with `--sandbox none` + bubblewrap running `true` with " +
      "the sandboxed host's own argv and environment (`sandboxedHostLaunch`) + a Deno " +
      "hello-world with the host's Deno flags (bench/floors.ts)",
    budget: 1.8,
    target: 1.1,
    measured: "0.87-1.44 through `deno task bench` (medians of 7 in 9 runs, load 7-16: the " +
      "lower the load the higher, 1.44 at load 7, where the floor was 230 ms: the view " +
      "unsandboxed 180, bwrap true 26, hello-world 24); 1.05-1.55 through .ci/run's fresh " +
      "machine (HOME in /tmp, Deno from npx; medians of 5 in 5 runs, load 11-16), where before " +
      "the sandbox showed the host Deno's cache it was 1.38-2.18",
    checked: true,
    reason: "Issue 51's decision: no daemon for one-off calls, so a sandboxed call costs at " +
      "least the unsandboxed one plus bubblewrap plus a second Deno start, and the figure is " +
      "held to that floor. Under load it is at it: the host serves in its own process (no " +
      "second isolate), the mount view is read without bash, and Deft fills Deno's cache for " +
      "the host (under 1 at times: the unsandboxed call starts a worker isolate that the " +
      "sandboxed call does not). About 100 ms above the floor does not shrink with the load, " +
      "so the ratio rises on a quiet machine; finding it is what the target asks. Budget: the " +
      "top of the spread plus a margin (four process starts per round, each swinging with the " +
      "load); a 400 ms stall in the sandboxed host's start fails it twice in a row.",
  },
  str_replace_20mb_deft_tool: {
    measures: "`deft tool` `str_replace` on a 20 MB file, default sandbox",
    baseline: "`python3` reading the file as text and writing it back (start to exit) + the " +
      "floor of a sandboxed one-off call (a view with `--sandbox none`, bubblewrap's `true` " +
      "with the host's argv, a Deno hello-world with the host's flags)",
    budget: 1.5,
    target: 1.1,
    measured: "0.63-1.17, medians of 7 in 6 runs, load 12-16 (Python's read + write alone " +
      "swings 480-1040 ms)",
    checked: true,
    reason: "Issue 51's decision: the edit through a one-off call costs the floor of a " +
      "sandboxed call plus the read and write itself. The editor checks, splices and writes " +
      "once (`str_replace_20mb` holds the edit alone) and the host runs without the `deft` " +
      "task's V8 flags. Under 1 because the edit flushes and renames where Python does not, " +
      "but Python's start is part of its side. Budget: the top of the spread plus a margin " +
      "(five process starts a round and a 20 MB write whose time swings with the disk).",
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
    budget: 0.9,
    target: 0.5,
    measured: "0.48-0.57 (load 7-14) after in-order replies were written from the main " +
      "thread, against 0.57-0.59 before (load 14-16; medians of 200, a fresh bash -c true " +
      "1.5-2.7 ms); 0.31-0.52 through .ci/run's fresh machine here; fresh machines of this " +
      "kind measured 0.77-0.84 before (issue 50)",
    checked: true,
    reason: "A call crosses serve's stdin, the executor, the tool worker (a message each way), " +
      "the shell's protocol (its control pipe and an end marker on each output pipe), then " +
      "stdout. Per call the serve process spends about 430-600 us of CPU and bash 160-200 us " +
      "(load 12-19); a V8 profile of serve puts three quarters of it in system calls that wake " +
      "another thread (futex, write), not in JavaScript (the executor and the approval gate " +
      "cost under 10 us). In-order replies are now written from the main thread, which took " +
      "one hand-over to Deno's blocking-I/O threads off each call (in A/B runs a quarter of " +
      "the wall time and 100 us of CPU at load 15-19, nothing measurable at 10-14); stdin still goes through those threads, and " +
      "the worker stays (issue 51's decision). The target (0.5, issue 51's decision) is met " +
      "under load here and missed on an idle machine, where a fresh bash costs less: it stays " +
      "the target. Budget: over the fresh machines' 0.84 measured before this change, so a " +
      "user's test run does not fail for the machine, while losing a hop's worth (+0.2) fails.",
  },
  container_first_answer: {
    measures: "container start to the first tool answer (`deno task bench --only container`)",
    baseline: "its floor: `docker run --rm IMAGE` running a Deno hello-world with the tool " +
      "host's Deno, flags and variables (`deftInside`), i.e. `docker run --rm IMAGE true` + " +
      "Deno's start inside (both printed)",
    budget: 2.7,
    target: 1.1,
    measured: "1.72-2.30, medians of 5 in 4 runs, load 13-22 (docker run true 635-955 ms, Deno's " +
      "start inside 105-227 ms; against docker run true alone 2.11-2.93, where the old budget " +
      "2.6 was set from 2.06-2.18 at load 9-14)",
    checked: false,
    reason: "Needs root, docker and a private dockerd; measured by `bench/container_bench.ts`. " +
      "The start overlaps: the likely runtime reads the image while nothing is probed, the " +
      "keeper's echo replaces the 100 ms polls, and one `exec`, sent at that echo, checks the " +
      "container and becomes the tool host (boot sent at once) while Deft finishes. What is " +
      "left above the floor is a second runtime call (`run` keeps the container, `exec` starts " +
      "the host), the runtime's checks and probes, and the worker and bash starting inside. " +
      "Budget: the top of the spread plus a margin; the target needs the host in the " +
      "container's own start command (src/tools/host/relay.ts would have to keep the " +
      "container alive past its first link). Too slow for the check (a private dockerd and " +
      "the test image).",
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
