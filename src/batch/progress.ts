/**
 * What a batch shows while it runs and when it ends. On a terminal, one line redrawn in place:
 * done / running / failed, tokens and an ETA. Elsewhere (a log file, CI), one line per finished
 * task. At the end, a table of every task and the totals.
 */
import type { TaskResult } from "./results.ts";

/** Counts the progress line shows. */
export interface ProgressCounts {
  total: number;
  done: number;
  running: number;
  pending?: number;
  failed: number;
  tokens: number;
}

/** The progress display on stderr. */
export class Progress {
  readonly #tty: boolean;
  readonly #started = performance.now();
  #counts: ProgressCounts;
  #doneAtStart: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  #drawn = false;

  constructor(counts: ProgressCounts, tty = Deno.stderr.isTerminal()) {
    this.#tty = tty;
    this.#counts = counts;
    this.#doneAtStart = counts.done;
    if (tty) this.#timer = setInterval(() => this.#draw(), 1000);
  }

  /** Replaces the counts and redraws. */
  update(counts: ProgressCounts): void {
    this.#counts = counts;
    this.#draw();
  }

  /** Reports one finished task (a line of its own when not on a terminal). */
  finished(result: TaskResult, counts: ProgressCounts): void {
    this.#counts = counts;
    if (this.#tty) {
      this.#draw();
      return;
    }
    const error = result.error ? ` — ${clip(result.error, 80)}` : "";
    write(
      `[${counts.done}/${counts.total}] ${result.id} ${result.status} ` +
        `${result.duration.toFixed(1)}s${error}\n`,
    );
  }

  /** Prints a plain note, keeping the progress line below it. */
  note(text: string): void {
    if (this.#tty && this.#drawn) write("\r\x1b[K");
    write(text.endsWith("\n") ? text : `${text}\n`);
    this.#draw();
  }

  /** Stops redrawing and clears the line. */
  stop(): void {
    clearInterval(this.#timer);
    if (this.#tty && this.#drawn) write("\r\x1b[K");
    this.#drawn = false;
  }

  #draw(): void {
    if (!this.#tty) return;
    write(`\r\x1b[K${progressLine(this.#counts, this.#eta())}`);
    this.#drawn = true;
  }

  #eta(): number | undefined {
    const c = this.#counts;
    const doneHere = c.done - this.#doneAtStart;
    if (doneHere <= 0) return undefined;
    const perTask = (performance.now() - this.#started) / 1000 / doneHere;
    return perTask * (c.total - c.done);
  }
}

/** `[#####.....] 12/20 done, 4 running, 1 failed, 35.2k tokens, ETA 1m05s`. */
export function progressLine(c: ProgressCounts, etaSeconds?: number): string {
  const width = 20;
  const filled = c.total ? Math.round((c.done / c.total) * width) : 0;
  const bar = "#".repeat(filled) + ".".repeat(width - filled);
  const pending = c.pending !== undefined ? `, ${c.pending} pending` : "";
  const eta = etaSeconds !== undefined ? `, ETA ${formatDuration(etaSeconds)}` : "";
  return `[${bar}] ${c.done}/${c.total} done, ${c.running} running${pending}, ` +
    `${c.failed} failed, ${formatTokens(c.tokens)} tokens${eta}`;
}

/** The end-of-batch table: one row per task, then totals by status. */
export function summaryTable(
  rows: readonly { id: string; result?: TaskResult; state?: string }[],
): string {
  const header = ["task", "status", "steps", "tokens", "cost", "time", "test", "error"];
  const lines = rows.map(({ id, result: r, state }) => [
    id,
    r?.status ?? state ?? "not run",
    r?.steps?.toString() ?? "-",
    r?.tokens ? formatTokens(r.tokens.total) : "-",
    r?.cost != null ? `$${r.cost.toFixed(4)}` : "-",
    r ? `${r.duration.toFixed(1)}s` : "-",
    r?.test_exit_code != null ? String(r.test_exit_code) : "-",
    r?.error ? clip(r.error, 60) : "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const format = (cells: string[]) =>
    cells.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd();
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line[1], (counts.get(line[1]) ?? 0) + 1);
  const totals = [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
  const tokens = rows.reduce((n, r) => n + (r.result?.tokens?.total ?? 0), 0);
  const costs = rows.map((r) => r.result?.cost).filter((c): c is number => typeof c === "number");
  const cost = costs.length ? `, $${costs.reduce((a, b) => a + b, 0).toFixed(4)}` : "";
  return [
    format(header),
    ...lines.map(format),
    "",
    `${rows.length} tasks: ${totals}; ${formatTokens(tokens)} tokens${cost}`,
  ].join("\n") + "\n";
}

function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60
    ? `${m}m${String(s % 60).padStart(2, "0")}s`
    : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function write(text: string): void {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
}
