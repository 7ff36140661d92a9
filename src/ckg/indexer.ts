/**
 * Brings the graph of one scope up to date: lists the source files, stats them, re-reads only the
 * ones whose size or mtime changed (or whose mtime is too recent to trust), re-parses only those
 * whose content hash changed, and forgets files that are gone. Cheap when nothing changed: one
 * listing, one stat per file and one query.
 */
import { discoverSources, type ListingCache } from "./discover.ts";
import type { ExtractedSymbol } from "./extract.ts";
import type { ExtractedRef } from "./edges.ts";
import type { FileRecord, FileRow, GraphStore } from "./store.ts";
import type { Parsing } from "./worker_pool.ts";
import type { CaptureOutcome } from "./capture.ts";
import type { Needle } from "./prefilter.ts";
import type * as ParseKit from "./parse_kit.ts";
import { DEFAULT_TIMEOUT_MS, startParsing } from "./start_parsing.ts";
import {
  type Candidate,
  failedRecord,
  isRacy,
  type Pending,
  readCandidate,
  type ReadOutcome,
  REAL_FS,
  type SourceFs,
  statSource,
} from "./source_read.ts";

export { REAL_FS, type SourceFs } from "./source_read.ts";

/** How to index. */
export interface IndexOptions {
  /**
   * Most parser workers to use for large batches; 0 parses in-process. Default: one per spare
   * core, at most 4 (see `defaultWorkers`).
   */
  workers?: number;
  /** Source bytes to parse before workers are worth their start-up. */
  workerThresholdBytes?: number;
  /** Read source handed to the parsers at once (default 1 MB); runs overlap while files are read. */
  sliceBytes?: number;
  /** Read source that may wait for parsing, recovery or storing before reading pauses (16 MB). */
  waitingBytes?: number;
  /** Per-file limit on parsing plus querying. */
  parseTimeoutMs?: number;
  /** Source to index into an empty graph before its refs indexes are built at the end (32 MB). */
  bulkBytes?: number;
  /** Called as files are processed. */
  onProgress?: (done: number, total: number) => void;
  fs?: SourceFs;
  /** Folder listings kept between refreshes (walk mode). */
  listings?: ListingCache;
  /**
   * Answer first: parse only new or changed files whose bytes hold this name, and leave the others
   * for later (`RefreshReport.deferred`). A changed file left for later loses its old symbols, so
   * the database never answers from a stale version. Ignored when the work is small anyway.
   */
  prefilter?: Needle;
  /** Source bytes to re-read before the prefilter is worth using (default 512 KB). */
  prefilterMinBytes?: number;
  /** Stop after reading this many bytes of changed files (`RefreshReport.remaining` says how many are left). */
  budgetBytes?: number;
  /** Parse with these (kept open) instead of starting parsers for this refresh. */
  parsing?: Parsing;
  /** Leave the parsers this refresh started open and hand them back (`RefreshReport.parsing`). */
  keepParsing?: boolean;
}

/** What one refresh did. */
export interface RefreshReport {
  mode: "git" | "walk";
  /** Source files seen under the scope. */
  seen: number;
  parsed: number;
  unchanged: number;
  /** Stat changed but content did not. */
  touched: number;
  removed: number;
  /** Skipped or failed during this refresh. */
  skipped: { path: string; reason: string }[];
  failed: { path: string; error: string }[];
  /** Parsed during this refresh with syntax errors (indexed as far as they parse). */
  syntaxErrors: string[];
  /** Folders that could not be listed, git trouble. */
  problems: { path: string; error: string }[];
  /** Folders left out by policy (walk mode): dependencies, build output, virtualenvs. */
  skippedDirs: { path: string; reason: string }[];
  /** How files were parsed ("on 2 parser workers", "in-process"; "none" when nothing was). */
  parser: string;
  /** Folders read to list the files (walk mode; unchanged folders' listings are kept). */
  foldersRead: number;
  /** New or changed files the prefilter left unparsed (not recorded: a later refresh parses them). */
  deferred: number;
  /**
   * With a prefilter: new or changed files read in this refresh whose bytes hold the name
   * (parsed ones, and deferred ones a narrower needle turned away). Zero means no file the index
   * does not already cover mentions the name at all.
   */
  holding: number;
  /** Changed files not looked at because the byte budget ran out. */
  remaining: number;
  /** With `keepParsing`: the parsers this refresh started, still open (the caller closes them). */
  parsing?: Parsing;
  elapsedMs: number;
}

/** Below this much source to re-read, parsing it all costs little more than filtering it. */
const PREFILTER_MIN_BYTES = 512 * 1024;
/** Hand read files to the parsers in slices of about this much source. */
const SLICE_BYTES = 1024 * 1024;
/**
 * Stop reading while this much read source waits for parsing or recovery, so memory stays bounded
 * on huge trees: a file's captures and extracted rows take several times its text.
 */
const MAX_WAITING_BYTES = 16 * 1024 * 1024;
/**
 * Source to index into an empty graph before its refs indexes are worth dropping and building
 * once at the end (measured: storing a kernel subset's 2.9 million references costs 20 s CPU
 * with the indexes grown row by row, 12 s with them built at the end).
 */
const BULK_BYTES = 32 * 1024 * 1024;
/** Store this many files per write transaction, or fewer when they hold this much source. */
const WRITE_BATCH = 256;
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Refreshes the files under `scope` (relative to `root`, "" for the whole workspace) in `store`.
 * The stages, in order: list the source files; stat them against what the store knows; forget
 * the files that are gone; record the ones that exist but cannot be examined; then read the
 * changed ones, parse them and store what they hold.
 */
export async function refreshScope(
  store: GraphStore,
  root: string,
  scope: string,
  options: IndexOptions = {},
): Promise<RefreshReport> {
  const started = performance.now();
  const fs = options.fs ?? REAL_FS;
  const discovery = await discoverSources(root, scope, options.listings);
  const report = emptyReport(discovery);
  const known = store.filesUnder(scope);
  const { present, candidates, unstatable } = statSources(fs, root, discovery.files, known, report);
  forgetGone(store, known, present, report);
  recordUnstatable(store, unstatable, report);
  if (candidates.length > 0) await reparseChanged(store, candidates, fs, options, report);
  report.elapsedMs = performance.now() - started;
  return report;
}

/** A report of nothing done yet, with what the listing found. */
function emptyReport(discovery: Awaited<ReturnType<typeof discoverSources>>): RefreshReport {
  return {
    mode: discovery.mode,
    seen: 0,
    parsed: 0,
    unchanged: 0,
    touched: 0,
    removed: 0,
    skipped: [],
    failed: [],
    syntaxErrors: [],
    problems: discovery.problems,
    skippedDirs: discovery.skippedDirs,
    parser: "none",
    foldersRead: discovery.foldersRead,
    deferred: 0,
    holding: 0,
    remaining: 0,
    elapsedMs: 0,
  };
}

/**
 * Stats every listed file against its stored row: unchanged ones are only counted; the others are
 * candidates to read, or, when they exist but cannot be examined, failures to record (once: a
 * failure already stored with the same note is not written again).
 */
function statSources(
  fs: SourceFs,
  root: string,
  files: readonly string[],
  known: ReadonlyMap<string, FileRow>,
  report: RefreshReport,
): { present: Set<string>; candidates: Candidate[]; unstatable: FileRecord[] } {
  const present = new Set<string>();
  const candidates: Candidate[] = [];
  const unstatable: FileRecord[] = [];
  for (const path of files) {
    const abs = `${root}/${path}`;
    const info = statSource(fs, root, abs);
    if (!info) continue;
    present.add(path);
    const row = known.get(path);
    if ("error" in info) {
      if (row?.status !== "failed" || row.note !== info.error) {
        unstatable.push(failedRecord(path, row, 0, 0, info.error));
      }
      continue;
    }
    const mtimeMs = info.mtime?.getTime() ?? 0;
    if (
      row && row.status !== "failed" && !row.racy && row.size === info.size &&
      row.mtimeMs === mtimeMs
    ) {
      report.unchanged++;
      continue;
    }
    candidates.push({ path, abs, size: info.size, mtimeMs, row });
  }
  report.seen = present.size;
  return { present, candidates, unstatable };
}

/** Removes the stored files that are no longer among the sources. */
function forgetGone(
  store: GraphStore,
  known: ReadonlyMap<string, FileRow>,
  present: ReadonlySet<string>,
  report: RefreshReport,
): void {
  const gone = [...known.values()].filter((row) => !present.has(row.path));
  store.removeFiles(gone.map((row) => row.id));
  report.removed = gone.length;
}

/** Stores (and reports) the files that exist but could not be examined. */
function recordUnstatable(store: GraphStore, unstatable: FileRecord[], report: RefreshReport) {
  for (const record of unstatable) {
    report.failed.push({ path: record.path, error: record.note ?? "" });
  }
  if (unstatable.length > 0) {
    store.transaction(() => {
      for (const record of unstatable) store.putFile(record, []);
    });
  }
}

/**
 * Reads the changed files, parses the ones to parse and stores what each holds: every file read
 * and handed to the parsers slice by slice, a C or C++ file with syntax errors parsed again as
 * soon as its first parse is back; at the end (also on an error) the parsers are closed or
 * handed back and the last writes stored.
 */
async function reparseChanged(
  store: GraphStore,
  candidates: Candidate[],
  fs: SourceFs,
  options: IndexOptions,
  report: RefreshReport,
): Promise<void> {
  const run = new Reparse(store, candidates, options, report);
  run.startParsersEarly();
  // A first index of a large tree: the refs indexes are built once at the end.
  const bulk = !run.needle && Math.min(run.candidateBytes, options.budgetBytes ?? Infinity) >=
      (options.bulkBytes ?? BULK_BYTES) &&
    store.refsEmpty();
  if (bulk) store.suspendRefIndexes();
  try {
    await run.readAll(fs);
    await run.waitForParsers();
  } finally {
    try {
      await run.finish();
    } finally {
      if (bulk) store.restoreRefIndexes();
    }
  }
}

/** The state of one `reparseChanged`: the parsers, the slice being filled, the pending writes. */
class Reparse {
  /** With a prefilter worth using: only files whose bytes hold the name are parsed now. */
  readonly needle?: Needle;
  readonly #total: number;
  /** Bytes of the changed files. */
  readonly candidateBytes: number;
  #done = 0;
  readonly #writes: (() => void)[] = [];
  /** Source bytes of the files whose rows wait in `#writes`. */
  #writeBytes = 0;
  readonly #mostWaiting: number;
  readonly #batchBytes: number;
  // Tree-sitter and the extractors load when a file is to be parsed: a miss that parses nothing
  // (answer first, no file holding the name) never loads them. Set before any parse completes.
  #kit!: typeof ParseKit;
  #kitLoading?: Promise<typeof ParseKit>;
  #parsingReady?: Promise<Parsing>;
  #parsing?: Parsing;
  readonly #running = new Set<Promise<void>>();
  #waitingBytes = 0;
  #slice: Pending[] = [];
  #sliceBytes = 0;
  #failure?: { error: unknown };

  constructor(
    private readonly store: GraphStore,
    private readonly candidates: Candidate[],
    private readonly options: IndexOptions,
    private readonly report: RefreshReport,
  ) {
    const candidateBytes = candidates.reduce((sum, c) => sum + c.size, 0);
    this.candidateBytes = candidateBytes;
    this.needle = options.prefilter &&
        candidateBytes >= (options.prefilterMinBytes ?? PREFILTER_MIN_BYTES)
      ? options.prefilter
      : undefined;
    this.#total = candidates.length;
    this.#mostWaiting = options.waitingBytes ?? MAX_WAITING_BYTES;
    this.#batchBytes = Math.min(WRITE_BATCH_BYTES, this.#mostWaiting / 4);
  }

  /**
   * Workers start while the first files are read, and parse each slice of files as soon as it is
   * read. With a prefilter only a few files are parsed, if any: this thread, started on first need.
   */
  startParsersEarly(): void {
    // (A failure to start is met again, and reported, where a slice is handed over.)
    if (!this.needle) this.#startParsers().catch(() => {});
  }

  /** Reads each changed file (until the byte budget runs out) and routes it by what it holds. */
  async readAll(fs: SourceFs): Promise<void> {
    const { candidates } = this;
    let budget = this.options.budgetBytes ?? Infinity;
    for (const [index, candidate] of candidates.entries()) {
      if (budget <= 0) {
        this.report.remaining = candidates.length - index;
        break;
      }
      budget -= candidate.size;
      await this.#route(candidate, await readCandidate(fs, candidate, this.needle));
    }
  }

  /**
   * One file read: left for later (its old symbols forgotten), added to the slice for the
   * parsers, or settled without a parse (gone, unchanged content, skipped or failed).
   */
  async #route(candidate: Candidate, outcome: ReadOutcome): Promise<void> {
    const { report, store } = this;
    if (outcome.kind === "deferred") {
      report.deferred++;
      if (outcome.held) report.holding++;
      if (candidate.row) {
        const id = candidate.row.id;
        this.#write(() => store.removeFiles([id]));
      }
      return;
    }
    if (outcome.kind === "parse") {
      if (this.needle) report.holding++;
      this.#slice.push(outcome.pending);
      this.#sliceBytes += outcome.pending.text.length;
      if (this.#sliceBytes >= (this.options.sliceBytes ?? SLICE_BYTES)) await this.#dispatch();
      return;
    }
    if (outcome.kind === "gone") {
      if (candidate.row) {
        const id = candidate.row.id;
        this.#write(() => store.removeFiles([id]));
        report.removed++;
      }
    } else if (outcome.kind === "same") {
      report.touched++;
      const { row, size, mtimeMs } = candidate;
      const racy = isRacy(mtimeMs);
      this.#write(() => store.updateFileStat(row!.id, size, mtimeMs, racy));
    } else {
      const { record } = outcome;
      if (record.status === "skipped") {
        report.skipped.push({ path: record.path, reason: record.note ?? "" });
      } else report.failed.push({ path: record.path, error: record.note ?? "" });
      this.#write(() => store.putFile(record, []));
    }
    this.#progress();
  }

  /**
   * Hands over the last slice and waits for every run and every recovery it started; a parser
   * that failed is thrown.
   */
  async waitForParsers(): Promise<void> {
    await this.#dispatch();
    while (this.#running.size > 0) await Promise.allSettled(this.#running);
    if (this.#failure) throw this.#failure.error;
  }

  /**
   * On an error, lets runs already handed over finish before their parser goes away; then closes
   * the parsers this refresh started (or hands them back, `keepParsing`) and stores the last
   * writes.
   */
  async finish(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled(this.#running);
    const used = this.#parsing ?? await this.#parsingReady?.catch(() => undefined);
    const { options } = this;
    if (used && options.keepParsing && !options.parsing && this.#failure === undefined) {
      this.report.parsing = used;
    } else if (used && !options.parsing) used.close();
    this.#flush();
  }

  #progress(): void {
    this.options.onProgress?.(++this.#done, this.#total);
  }

  #flush(): void {
    if (this.#writes.length === 0) return;
    this.store.transaction(() => {
      for (const write of this.#writes.splice(0)) write();
    });
  }

  #write(fn: () => void, bytes = 0): void {
    this.#writes.push(fn);
    this.#writeBytes += bytes;
    if (this.#writes.length >= WRITE_BATCH || this.#writeBytes >= this.#batchBytes) {
      this.#writeBytes = 0;
      this.#flush();
    }
  }

  #loadKit(): Promise<typeof ParseKit> {
    return this.#kitLoading ??= import("./parse_kit.ts").then((loaded) => this.#kit = loaded);
  }

  #startParsers(): Promise<Parsing> {
    return this.#parsingReady ??= this.#loadKit().then((loaded) =>
      this.options.parsing ??
        (this.needle
          ? new loaded.InProcessParsing(this.options.parseTimeoutMs ?? DEFAULT_TIMEOUT_MS)
          : startParsing(loaded, this.candidates, this.options))
    );
  }

  /**
   * Hands the slice read so far to the parsers; reading stops to wait when too much read text
   * waits for a parser.
   */
  async #dispatch(): Promise<void> {
    const items = this.#slice;
    const bytes = this.#sliceBytes;
    this.#slice = [];
    this.#sliceBytes = 0;
    if (items.length === 0) return;
    this.#waitingBytes += bytes;
    const run: Promise<void> = this.#startParsers().then((ready) => {
      this.#parsing = ready;
      this.report.parser = ready.description;
      return ready.run(
        items.map((item, id) => ({ id, lang: item.lang, text: item.text })),
        (id, outcome) => {
          this.#recordParsed(items[id], outcome);
          this.#progress();
        },
      );
    }).catch((error) => {
      this.#failure ??= { error };
    }).finally(() => {
      this.#waitingBytes -= bytes;
      this.#running.delete(run);
    });
    this.#running.add(run);
    while (this.#waitingBytes > this.#mostWaiting && this.#running.size > 0) {
      await Promise.race(this.#running);
    }
  }

  /**
   * Starts recovering a C or C++ file with syntax errors as soon as its first parse is back, so
   * its text and captures count against the bytes reading waits for (memory stays bounded by
   * `waitingBytes`, not by how many files of the tree have errors).
   */
  #startRecovery(item: Pending, outcome: CaptureOutcome & { ok: true }): void {
    const bytes = item.text.length;
    this.#waitingBytes += bytes;
    const run: Promise<void> = this.#recover(item, outcome).catch((error) => {
      this.#failure ??= { error };
    }).finally(() => {
      this.#waitingBytes -= bytes;
      this.#running.delete(run);
    });
    this.#running.add(run);
  }

  /** C and C++ files with syntax errors, recovered as far as they go (see `recoverDefinitions`). */
  async #recover(item: Pending, outcome: CaptureOutcome & { ok: true }): Promise<void> {
    const parse = async (texts: string[]): Promise<CaptureOutcome[]> => {
      const ready = this.#parsing ?? await this.#startParsers();
      const outcomes: CaptureOutcome[] = texts.map(() => ({ ok: false, error: "not parsed" }));
      await ready.run(
        texts.map((text, id) => ({ id, lang: item.lang, text })),
        (id, parsed) => outcomes[id] = parsed,
      );
      return outcomes;
    };
    const { hasError, symbols, refs } = await this.#kit.recoverDefinitions(
      item.lang,
      item.text,
      outcome.result,
      parse,
    );
    this.#keep(item, hasError, symbols, refs);
  }

  /** Stores a parsed file with its symbols and references. */
  #keep(item: Pending, hasErrors: boolean, symbols: ExtractedSymbol[], refs: ExtractedRef[]) {
    const record = { ...item.record, hasErrors };
    if (hasErrors) this.report.syntaxErrors.push(record.path);
    this.report.parsed++;
    this.#write(() => this.store.putFile(record, symbols, refs), item.text.length);
  }

  /** What one parse gave: stored, stored as failed, or kept for recovery (C, C++). */
  #recordParsed(item: Pending, outcome: CaptureOutcome): void {
    if (
      outcome.ok && outcome.result.hasError && (item.lang === "c" || item.lang === "cpp")
    ) {
      this.#startRecovery(item, outcome);
      return;
    }
    if (!outcome.ok) {
      this.report.failed.push({ path: item.record.path, error: outcome.error });
      const record = { ...item.record, status: "failed" as const, note: outcome.error };
      this.#write(() => this.store.putFile(record, []));
      return;
    }
    const symbols = this.#kit.extractSymbols(item.lang, item.text, outcome.result);
    this.#keep(
      item,
      outcome.result.hasError,
      symbols,
      this.#kit.extractRefs(item.text, outcome.result, symbols),
    );
  }
}
