/**
 * Issue 39's table: every latency figure as a ratio to its baseline in the same run, against its
 * budget and target in `budgets.ts`. The container figure has its own benchmark
 * (`--only container`, root and docker needed).
 *
 * Run alone with `deno run -A bench/latency_bench.ts [--runs N] [--calls N] [--figures id,id]`.
 */
import { BUDGETS, type FigureId, overBudget } from "./budgets.ts";
import {
  type Bench,
  deftToolStrReplace,
  demoReplay,
  editorOnBigFile,
  type Figure,
  openBench,
  sandboxedView,
  serveRoundTrip,
  startFigures,
} from "./figures.ts";
import { ms } from "./timing.ts";

type Measure = (bench: Bench, runs: number, calls: number) => Promise<Figure | Figure[]>;

const MEASURES: Partial<Record<FigureId, Measure>> = {
  task_done_start: (b, runs) => startFigures(b, runs),
  sandboxed_view: (b, runs) => sandboxedView(b, runs),
  str_replace_20mb_deft_tool: (b, runs) => deftToolStrReplace(b, runs),
  str_replace_20mb: (b, runs) => editorOnBigFile(b, runs),
  demo_replay: (b, runs) => demoReplay(b, Math.max(5, runs >> 1)),
  serve_round_trip: (b, _runs, calls) => serveRoundTrip(b, calls),
};

/** Measures every figure and prints one line each. */
export default async function latencyBench(args: string[]): Promise<void> {
  const runs = intFlag(args, "--runs", 9);
  const calls = intFlag(args, "--calls", 200);
  const at = args.indexOf("--figures");
  const only = at >= 0 ? args[at + 1].split(",") : undefined;
  const bench = await openBench();
  try {
    for (const [id, measure] of Object.entries(MEASURES) as [FigureId, Measure][]) {
      if (only && !only.includes(id)) continue;
      try {
        for (const f of [await measure(bench, runs, calls)].flat()) console.log(describe(f));
      } catch (e) {
        console.log(`latency: ${id}: FAILED: ${e instanceof Error ? e.message : e}`);
      }
    }
  } finally {
    await bench.close();
  }
}

/** One line of the table: the figure, its ratio, its budget and target, and how it stands. */
export function describe(f: Figure): string {
  const { budget, target } = BUDGETS[f.id];
  const verdict = overBudget(f.id, f.ratio) ? " OVER BUDGET" : f.ratio > target ? " MISSED" : "";
  const floor = f.parts
    ? ` (floor: ${f.parts.map((p) => `${p.name} ${ms(p.median)}`).join(" + ")})`
    : "";
  return `latency: ${f.id}: ${ms(f.subject)} vs ${ms(f.baseline)}; ratio ${f.ratio.toFixed(3)} ` +
    `(budget ${budget}, target ${target}; median of ${f.runs}; load ` +
    `${Deno.loadavg()[0].toFixed(1)})${verdict}${floor}`;
}

function intFlag(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} needs a positive integer`);
  return value;
}

if (import.meta.main) await latencyBench(Deno.args);
