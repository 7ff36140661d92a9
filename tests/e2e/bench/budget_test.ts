/**
 * The latency budget (bench/budgets.ts), checked on the figures that are cheap to measure: each a
 * median of repeats interleaved with its baseline in the same run. A figure over its budget is
 * measured again with twice the repeats, and fails only when it is over both times, so noise on a
 * shared machine does not fail the suite, and a real slowdown (50 ms more at start) does.
 */
import assert from "node:assert/strict";
import { BUDGETS, overBudget } from "../../../bench/budgets.ts";
import {
  type Bench,
  deftToolStrReplace,
  editorOnBigFile,
  type Figure,
  openBench,
  sandboxedView,
  serveRoundTrip,
  startFigures,
} from "../../../bench/figures.ts";
import { describe } from "../../../bench/latency_bench.ts";
import { tempDir } from "../../helpers/temp.ts";

/** Repeats of the start-up figures (two Deft starts and one hello-world each). */
const START_RUNS = 11;
/** Repeats of the 20 MB editor figures (a Python read + write of 20 MB each). */
const EDIT_RUNS = 5;
/**
 * Repeats of the sandboxed one-off figures against their floor (a sandboxed call, the same
 * unsandboxed, bubblewrap's `true` and a Deno hello-world each; for the 20 MB edit a Python read
 * + write too).
 */
const FLOOR_RUNS = 5;
/** Round trips through `deft serve` (and fresh `bash -c true` spawns). */
const SERVE_CALLS = 150;

/** Measures with `scale` times the repeats. */
type Measure = (bench: Bench, scale: number) => Promise<Figure[]>;

async function check(measure: Measure): Promise<void> {
  await using dir = await tempDir("deft-budget-");
  const bench = await openBench(dir.path);
  try {
    const first = await measure(bench, 1);
    const lines = first.map(describe);
    if (first.some((f) => overBudget(f.id, f.ratio))) {
      // Once more, with twice the repeats: only a figure over budget both times fails.
      const again = await measure(bench, 2);
      lines.push(...again.map((f) => `${describe(f)} (measured again)`));
      const over = again.filter((f) =>
        overBudget(f.id, f.ratio) && first.some((g) => g.id === f.id && overBudget(g.id, g.ratio))
      );
      assert.equal(
        over.length,
        0,
        `Over the latency budget (bench/budgets.ts), twice in a row:\n${lines.join("\n")}\n` +
          over.map((f) => `${f.id}: ${BUDGETS[f.id].reason}`).join("\n") +
          `\nFind what made it slower (deno task bench --only latency), or, if the cost is ` +
          `wanted, raise the budget in bench/budgets.ts and say why there.`,
      );
    }
    console.log(lines.join("\n"));
  } finally {
    await bench.close();
  }
}

Deno.test("latency budget: deft tool task_done and deft --help start, against a hello-world", async () => {
  await check((bench, scale) => startFigures(bench, START_RUNS * scale));
});

Deno.test("latency budget: a bash round trip through deft serve, against bash -c true", async () => {
  await check(async (bench, scale) => [await serveRoundTrip(bench, SERVE_CALLS * scale)]);
});

Deno.test("latency budget: str_replace and a tail view of a 20 MB file, against Python's read + write", async () => {
  await check((bench, scale) => editorOnBigFile(bench, EDIT_RUNS * scale));
});

Deno.test("latency budget: a sandboxed deft tool view, against its floor (unsandboxed + bwrap true + hello-world)", async () => {
  await check(async (bench, scale) => [await sandboxedView(bench, FLOOR_RUNS * scale)]);
});

Deno.test("latency budget: a 20 MB str_replace through deft tool, against Python's read + write plus the sandboxed floor", async () => {
  await check(async (bench, scale) => [await deftToolStrReplace(bench, FLOOR_RUNS * scale)]);
});
