/**
 * A batch as HTML: its totals, a sortable table of tasks (each linking to its run further down the
 * same page), the plots, and every run folded under its task. Two batches: the tasks whose outcome
 * flipped between them, and their totals side by side.
 */
import { block, type BlockLimits, text } from "./escape.ts";
import type { BatchModel, RunModel, RunStats } from "./model.ts";
import { runStats } from "./model.ts";
import { deniedDestinations, networkSummary } from "./network.ts";
import { costStrip, histogram } from "./plots.ts";
import { badge, count, dollars, runSection, seconds } from "./run.ts";

/** Limits per run in a batch page: big enough to read, small enough for 500 runs in one page. */
export const BATCH_LIMITS: BlockLimits = { line: 1000, total: 8_000 };

/** A batch's totals. */
export interface BatchTotals {
  tasks: number;
  passed: number;
  notPassed: number;
  tokens: number;
  cost: number | null;
  seconds: number;
  steps: number;
  toolErrors: number;
}

/** Adds up the runs of a batch. */
export function totals(runs: readonly RunModel[]): BatchTotals {
  const all = runs.map(runStats);
  const costs = all.map((s) => s.cost).filter((c): c is number => c !== null);
  const sum = (f: (s: RunStats) => number | null) => all.reduce((n, s) => n + (f(s) ?? 0), 0);
  const passed = all.filter((s) => s.status === "passed").length;
  return {
    tasks: all.length,
    passed,
    notPassed: all.length - passed,
    tokens: sum((s) => s.tokens),
    cost: costs.length ? costs.reduce((a, b) => a + b, 0) : null,
    seconds: sum((s) => s.seconds),
    steps: sum((s) => s.steps),
    toolErrors: sum((s) => s.toolErrors),
  };
}

function cell(shown: string, value: number | string | null, numeric = true): string {
  const v = value === null ? "" : String(value);
  return `<td${numeric ? ` class="n"` : ""} data-v="${text(v)}">${shown}</td>`;
}

/** The anchor of run `i` of batch `prefix` (from positions only: data never makes an id). */
export function runAnchor(prefix: string, i: number): string {
  return `${prefix}run-${i}`;
}

function table(batch: BatchModel, prefix: string): string {
  const head = [
    "task",
    "status",
    "steps",
    "tokens",
    "cost",
    "seconds",
    "tool errors",
    "patch lines",
    "denied destinations",
  ];
  const rows = batch.runs.map((run, i) => {
    const s = runStats(run);
    // How many destinations the network proxy refused the task (a dash: no list recorded).
    const denied = deniedDestinations(networkSummary([run.trajectory?.network], []));
    return `<tr>${
      cell(`<a href="#${runAnchor(prefix, i)}">${text(run.name)}</a>`, run.name, false)
    }${cell(badge(s.status), s.status, false)}${cell(count(s.steps), s.steps)}${
      cell(count(s.tokens), s.tokens)
    }${cell(dollars(s.cost), s.cost)}${cell(seconds(s.seconds), s.seconds)}${
      cell(count(s.toolErrors), s.toolErrors)
    }${cell(count(s.patchLines), s.patchLines)}${
      cell(denied ? `<span class="badge bad">${count(denied)}</span>` : count(denied), denied)
    }</tr>`;
  }).join("\n");
  return `<table class="sortable"><thead><tr>${
    head.map((h) => `<th>${h}</th>`).join("")
  }</tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

function totalsList(t: BatchTotals): string {
  return `<dl class="head"><dt>tasks</dt><dd>${count(t.tasks)}</dd><dt>passed</dt><dd>${
    count(t.passed)
  } (${t.tasks ? ((100 * t.passed) / t.tasks).toFixed(1) : "0"}%)</dd><dt>tokens</dt><dd>${
    count(t.tokens)
  }</dd><dt>cost</dt><dd>${dollars(t.cost)}</dd><dt>time</dt><dd>${
    seconds(t.seconds)
  } summed over tasks</dd><dt>tool errors</dt><dd>${count(t.toolErrors)}</dd></dl>`;
}

/** The whole batch: totals, table, plots, and each run under its anchor. */
export function batchSection(batch: BatchModel, prefix = "", limits = BATCH_LIMITS): string {
  const stats = batch.runs.map(runStats);
  const plots = `<div class="plots"><figure><figcaption>Cost per task, passed or not</figcaption>${
    costStrip(batch.runs.map((r, i) => ({
      cost: stats[i].cost ?? NaN,
      passed: stats[i].status === "passed",
      label: r.name,
    })))
  }</figure><figure><figcaption>Steps per task</figcaption>${
    histogram(stats.map((s) => s.steps ?? NaN), "steps")
  }</figure><figure><figcaption>Duration per task</figcaption>${
    histogram(stats.map((s) => s.seconds ?? NaN), "s")
  }</figure></div>`;
  const runs = batch.runs.map((run, i) =>
    `<details class="run fold" open id="${runAnchor(prefix, i)}"><summary>${text(run.name)} ${
      badge(stats[i].status)
    }</summary>${runSection(run, limits)}</details>`
  ).join("\n");
  return `<p class="note">${block(batch.dir)}</p>${totalsList(totals(batch.runs))}<h3>Tasks</h3>${
    table(batch, prefix)
  }<h3>Plots</h3>${plots}<h3>Runs</h3>${runs}`;
}

/** How a task changed between two batches. */
export interface Flip {
  id: string;
  before: string;
  after: string;
  /** `fixed`: passes now and did not before; `broke`: the other way. */
  kind: "fixed" | "broke";
}

/** The tasks that passed in one batch and not in the other. */
export function flips(a: BatchModel, b: BatchModel): Flip[] {
  const before = new Map(a.runs.map((r) => [r.name, runStats(r).status]));
  const out: Flip[] = [];
  for (const run of b.runs) {
    const was = before.get(run.name);
    const now = runStats(run).status;
    if (was === undefined || (was === "passed") === (now === "passed")) continue;
    out.push({ id: run.name, before: was, after: now, kind: now === "passed" ? "fixed" : "broke" });
  }
  return out;
}

/** Two batches: the flips, the totals side by side, then each batch in full. */
export function compareSection(a: BatchModel, b: BatchModel): string {
  const [ta, tb] = [totals(a.runs), totals(b.runs)];
  const line = (name: string, f: (t: BatchTotals) => string) =>
    `<tr><th>${name}</th><td class="n">${f(ta)}</td><td class="n">${f(tb)}</td></tr>`;
  const side = `<table><thead><tr><th></th><th>A</th><th>B</th></tr></thead><tbody>${
    [
      line("tasks", (t) => count(t.tasks)),
      line("passed", (t) => count(t.passed)),
      line("pass rate", (t) => t.tasks ? `${((100 * t.passed) / t.tasks).toFixed(1)}%` : "—"),
      line("tokens", (t) => count(t.tokens)),
      line("cost", (t) => dollars(t.cost)),
      line("time", (t) => seconds(t.seconds)),
      line("steps", (t) => count(t.steps)),
      line("tool errors", (t) => count(t.toolErrors)),
    ].join("")
  }</tbody></table>`;
  const found = flips(a, b);
  const index = (batch: BatchModel, id: string) => batch.runs.findIndex((r) => r.name === id);
  const rows = found.map((f) =>
    `<tr class="flip-${f.kind}"><td><a href="#${runAnchor("b-", index(b, f.id))}">${
      text(f.id)
    }</a></td><td>${badge(f.before)}</td><td>${badge(f.after)}</td><td>${
      f.kind === "fixed" ? "now passes" : "no longer passes"
    }</td></tr>`
  ).join("\n");
  const flipTable = found.length
    ? `<table class="sortable"><thead><tr><th>task</th><th>A</th><th>B</th><th>change</th></tr></thead><tbody>${rows}</tbody></table>`
    : `<p class="note">no task changed between passing and not passing</p>`;
  return `<h2>A against B</h2><p>A: <span class="mono">${
    text(a.dir)
  }</span><br>B: <span class="mono">${
    text(b.dir)
  }</span></p>${side}<h3>Flipped (${found.length})</h3>${flipTable}<h2>Batch A</h2>${
    batchSection(a, "a-")
  }<h2>Batch B</h2>${batchSection(b, "b-")}`;
}
