/**
 * The network proxy's decisions a run recorded (the trajectory's `network` list: host, port,
 * allowed or not, the reason, the time), as the page shows them: per run a table of destinations,
 * refused ones first and marked, with how often and when first; per step the destinations decided
 * while it ran (told by the times: a step is recorded when it ends); per batch task the number of
 * refused destinations. The list is data from disk: each entry is checked against the shape the
 * recorder writes and one that does not fit is left out with a note; every string goes through
 * escape.ts, cut to a length; the rows shown are capped, the rest counted.
 */
import { z } from "zod";
import { type BlockLimits, text } from "./escape.ts";

/** One decision as recorded (src/trajectory/recorder.ts `NetworkRecord`). */
const Decision = z.object({
  time: z.string(),
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  allowed: z.boolean(),
  reason: z.string(),
});

type Decision = z.infer<typeof Decision>;

/** Limits on what one run's network decisions put in the page. */
export interface NetworkLimits {
  /** Destination rows the run's table shows; the others are counted in a note. */
  rows: number;
  /** Destinations one step lists; the others are counted. */
  perStep: number;
  /** Characters of a host, a reason or a time kept; the rest is cut with a note. */
  chars: number;
}

export const NETWORK_LIMITS: NetworkLimits = { rows: 200, perStep: 5, chars: 300 };

/**
 * The limits for a run shown with `block` limits: a page of many runs (a batch's, with smaller
 * blocks) shows fewer rows per run, so 500 tasks that each met 100k hosts stay a page to open.
 */
export function networkLimits(block: BlockLimits): NetworkLimits {
  const rows = Math.max(20, Math.floor(block.total / 500));
  return { ...NETWORK_LIMITS, rows: Math.min(NETWORK_LIMITS.rows, rows) };
}

/** One destination with one outcome: every decision alike, added up. */
export interface Destination {
  host: string;
  port: number;
  allowed: boolean;
  reason: string;
  count: number;
  /** The first decision's recorded time. */
  first: string;
  /** The step that was running at the first decision (its `step_number`); null: after the last. */
  step: unknown;
}

/** A run's decisions, read and added up. */
export interface NetworkSummary {
  /** Decisions read (entries that fit the shape). */
  decisions: number;
  /** Each destination and outcome once, refused ones first, then in the order first seen. */
  destinations: Destination[];
  /** Entries left out because they do not fit the shape, and why the list was left out if so. */
  skipped: number;
  problem: string | null;
  /** Decisions the trajectory counted but did not list (past the most it keeps). */
  notRecorded: number;
  /** The destinations decided during each step (by the step's object). */
  perStep: Map<object, Destination[]>;
}

interface StepLike {
  step_number?: unknown;
  timestamp?: unknown;
}

function when(value: unknown): number | null {
  if (typeof value !== "string") return null;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : null;
}

/**
 * Reads the `network` lists of a run's files (`lists`, oldest first) and ties each decision to the
 * step that was running then (`steps`, in the order they happened).
 */
export function networkSummary(
  lists: readonly unknown[],
  steps: readonly StepLike[],
  notRecorded: readonly unknown[] = [],
): NetworkSummary | null {
  if (lists.every((l) => l === undefined)) return null;
  const summary: NetworkSummary = {
    decisions: 0,
    destinations: [],
    skipped: 0,
    problem: null,
    // A count the trajectory kept of decisions it did not list (only whole, sane numbers).
    notRecorded: notRecorded.reduce<number>(
      (n, c) => n + (Number.isSafeInteger(c) && (c as number) > 0 ? c as number : 0),
      0,
    ),
    perStep: new Map(),
  };
  // A step is recorded when it ends: a decision belongs to the first step ending at or after it.
  const ends = steps.flatMap((s) => {
    const t = when(s.timestamp);
    return t === null ? [] : [{ t, step: s }];
  });
  const stepAt = (time: number | null): StepLike | undefined => {
    if (time === null) return undefined;
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid].t < time) lo = mid + 1;
      else hi = mid;
    }
    return ends[lo]?.step;
  };
  const byKey = new Map<string, Destination>();
  const stepKeys = new Map<object, Map<string, Destination>>();
  for (const list of lists) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      summary.problem = "the trajectory's network field is not a list; it is left out";
      continue;
    }
    for (const entry of list) {
      const parsed = Decision.safeParse(entry);
      if (!parsed.success) {
        summary.skipped++;
        continue;
      }
      const d: Decision = parsed.data;
      summary.decisions++;
      const step = stepAt(when(d.time));
      const key = JSON.stringify([d.host, d.port, d.allowed, d.reason]);
      let dest = byKey.get(key);
      if (!dest) {
        dest = { ...d, count: 0, first: d.time, step: step?.step_number ?? null };
        byKey.set(key, dest);
      }
      dest.count++;
      if (!step) continue;
      const mine = stepKeys.get(step) ?? new Map<string, Destination>();
      stepKeys.set(step, mine);
      const inStep = mine.get(key) ?? { ...dest, count: 0, first: d.time, step: step.step_number };
      inStep.count++;
      mine.set(key, inStep);
    }
  }
  const refusedFirst = (list: Destination[]) =>
    list.filter((d) => !d.allowed).concat(list.filter((d) => d.allowed));
  summary.destinations = refusedFirst([...byKey.values()]);
  for (const [step, mine] of stepKeys) summary.perStep.set(step, refusedFirst([...mine.values()]));
  return summary;
}

/** `value` as text, cut at `chars` characters with a note of how many more there were. */
function cut(value: string, chars: number): string {
  if (value.length <= chars) return text(value);
  return `${text(value.slice(0, chars))}<span class="cut">… ${
    value.length - chars
  } more characters cut</span>`;
}

function where(d: Destination, limits: NetworkLimits): string {
  return `<span class="mono">${cut(d.host, limits.chars)}:${d.port}</span>`;
}

function mark(d: Destination): string {
  return d.allowed
    ? `<span class="badge ok">allowed</span>`
    : `<span class="badge bad">denied</span>`;
}

/** How many distinct destinations the proxy refused in a run (null: it recorded no list). */
export function deniedDestinations(summary: NetworkSummary | null): number | null {
  if (!summary) return null;
  return new Set(
    summary.destinations.filter((d) => !d.allowed).map((d) => `${d.host}\0${d.port}`),
  ).size;
}

/** The run's "Network" section: a line of totals, then the destinations, refused ones first. */
export function networkSection(
  summary: NetworkSummary | null,
  limits: NetworkLimits = NETWORK_LIMITS,
): string {
  if (!summary) return "";
  const all = summary.destinations;
  const refused = all.filter((d) => !d.allowed);
  const tries = (list: Destination[]) => list.reduce((n, d) => n + d.count, 0);
  const notes: string[] = [];
  if (summary.problem) notes.push(summary.problem);
  if (summary.notRecorded > 0) {
    notes.push(
      `${summary.notRecorded} more decision${summary.notRecorded === 1 ? " was" : "s were"} ` +
        "made than the trajectory lists (it keeps the first 2000); they are not shown",
    );
  }
  if (summary.skipped > 0) {
    notes.push(
      `${summary.skipped} entr${summary.skipped === 1 ? "y" : "ies"} of the network list ` +
        "did not have the recorded shape (time, host, port, allowed, reason) and are left out",
    );
  }
  const shown = all.slice(0, limits.rows);
  const rows = shown.map((d) =>
    `<tr class="${d.allowed ? "net-allowed" : "net-denied"}"><td>${mark(d)}</td><td>${
      where(d, limits)
    }</td><td>${cut(d.reason, limits.chars)}</td><td class="n">${d.count}</td><td class="mono">${
      cut(d.first, limits.chars)
    }</td><td>${d.step === null ? "after the last step" : `step ${text(d.step)}`}</td></tr>`
  ).join("\n");
  const more = all.length > shown.length
    ? `<p class="note cut">${all.length - shown.length} more destinations not shown</p>`
    : "";
  const table = all.length
    ? `<table class="network"><thead><tr><th></th><th>destination</th><th>reason</th><th>count</th>` +
      `<th>first</th><th>during</th></tr></thead><tbody>\n${rows}\n</tbody></table>${more}`
    : "";
  return `<section class="network"><h4>Network</h4><p>${summary.decisions} decision(s): ${
    tries(refused)
  } denied to ${refused.length} destination(s), ${tries(all) - tries(refused)} allowed to ${
    all.length - refused.length
  } destination(s).</p>${
    notes.map((n) => `<p class="note">${text(n)}</p>`).join("")
  }${table}</section>`;
}

/** The line a step shows for the destinations decided while it ran. */
export function stepNetwork(
  summary: NetworkSummary | null,
  step: object,
  limits: NetworkLimits = NETWORK_LIMITS,
): string {
  const mine = summary?.perStep.get(step);
  if (!mine?.length) return "";
  const shown = mine.slice(0, limits.perStep).map((d) =>
    `${mark(d)} ${where(d, limits)}${d.allowed ? "" : ` (${cut(d.reason, limits.chars)})`}${
      d.count > 1 ? ` ×${d.count}` : ""
    }`
  );
  if (mine.length > shown.length) {
    shown.push(
      `<span class="cut">${mine.length - shown.length} more destinations not shown</span>`,
    );
  }
  return `<p class="step-network">network: ${shown.join(", ")}</p>`;
}
