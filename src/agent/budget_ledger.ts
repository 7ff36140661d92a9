/**
 * A spend ledger shared by the runs of one batch (`deft batch --max-cost-usd`): one JSON Lines
 * file in the batch's output folder. Its first line holds the batch-wide caps and when the batch
 * started; each later line is one model response's spend (`cost_usd`, `tokens`) by one task.
 * Every task's `deft run` appends under an exclusive file lock and reads the total under a
 * shared one before each model request, the same locking `results.jsonl` uses, so runs in other
 * processes and on other Slurm nodes (a shared file system) see each other's spend.
 */
import type { BudgetConfig as BudgetCaps } from "../config/budget.ts";

/** The most bytes a ledger may hold (about a million model responses): more is not ours. */
const MAX_LEDGER_BYTES = 64 * 1024 * 1024;

/** What a ledger says: the batch's caps, when it started, and what its tasks spent so far. */
export interface LedgerState {
  caps: BudgetCaps;
  /** Milliseconds since the epoch when the batch first started. */
  startedAt: number;
  costUsd: number;
  tokens: number;
}

/** A ledger that is missing, unreadable or not one Deft wrote. */
export class LedgerError extends Error {
  override name = "LedgerError";
}

/**
 * Creates the ledger at `path` with `caps` unless it exists already (a batch run again, or a
 * Slurm array task after the submitter made it): then its own caps and start time stand, and
 * are returned. Throws a LedgerError when an existing file is not a ledger.
 */
export async function openLedger(path: string, caps: BudgetCaps): Promise<LedgerState> {
  const header = JSON.stringify({ deft_budget_ledger: 1, caps, started_at: Date.now() });
  try {
    const file = await Deno.open(path, { createNew: true, write: true });
    try {
      await file.lock(true);
      await file.write(new TextEncoder().encode(header + "\n"));
    } finally {
      file.close();
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  }
  return await readLedger(path);
}

/** The ledger's caps and total spend, read under a shared lock. */
export async function readLedger(path: string): Promise<LedgerState> {
  const file = await openRegular(path, { read: true });
  try {
    await file.lock(false);
    const info = await file.stat();
    if (info.size > MAX_LEDGER_BYTES) {
      throw new LedgerError(`the budget ledger ${path} is over ${MAX_LEDGER_BYTES} bytes`);
    }
    const bytes = new Uint8Array(info.size);
    let read = 0;
    while (read < bytes.length) {
      const n = await file.read(bytes.subarray(read));
      if (n === null) break;
      read += n;
    }
    return parseLedger(new TextDecoder().decode(bytes.subarray(0, read)), path);
  } finally {
    file.close();
  }
}

/** Adds one response's spend by `by` (a task id) to the ledger, in one write under the lock. */
export async function chargeLedger(
  path: string,
  spend: { costUsd: number; tokens: number; by: string },
): Promise<void> {
  const line = JSON.stringify({ by: spend.by, cost_usd: spend.costUsd, tokens: spend.tokens });
  const file = await openRegular(path, { append: true });
  try {
    await file.lock(true);
    await file.write(new TextEncoder().encode(line + "\n"));
  } finally {
    file.close();
  }
}

async function openRegular(path: string, options: Deno.OpenOptions): Promise<Deno.FsFile> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (e) {
    throw new LedgerError(`cannot read the budget ledger ${path}: ${(e as Error).message}`);
  }
  if (!info.isFile) {
    throw new LedgerError(`the budget ledger ${path} is not a regular file; remove it`);
  }
  return await Deno.open(path, options);
}

function parseLedger(text: string, path: string): LedgerState {
  const lines = text.split("\n");
  let header: { deft_budget_ledger?: unknown; caps?: BudgetCaps; started_at?: unknown };
  try {
    header = JSON.parse(lines[0]);
  } catch {
    header = {};
  }
  if (header.deft_budget_ledger !== 1 || typeof header.started_at !== "number") {
    throw new LedgerError(
      `${path} is not a Deft budget ledger (its first line is not the header); remove it ` +
        `to start the batch's budget afresh`,
    );
  }
  const state: LedgerState = {
    caps: header.caps ?? {},
    startedAt: header.started_at,
    costUsd: 0,
    tokens: 0,
  };
  // A line cut short (a writer killed mid-write) counts for nothing; the others are summed.
  for (const line of lines.slice(1)) {
    if (line.trim() === "") continue;
    try {
      const entry = JSON.parse(line);
      if (Number.isFinite(entry.cost_usd) && entry.cost_usd > 0) state.costUsd += entry.cost_usd;
      if (Number.isFinite(entry.tokens) && entry.tokens > 0) state.tokens += entry.tokens;
    } catch {
      continue;
    }
  }
  return state;
}
