/**
 * Which parsers a refresh uses: parser workers when there is enough source to parse and spare
 * cores, otherwise this thread.
 */
import { grammarsForPaths } from "./languages.ts";
import type * as ParseKit from "./parse_kit.ts";
import type { Parsing } from "./worker_pool.ts";
import type { Candidate } from "./source_read.ts";

/** Per-file limit on parsing plus querying, unless the caller sets one. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Source bytes to parse before workers are worth their start-up. */
const DEFAULT_WORKER_THRESHOLD = 1536 * 1024;

/** What `startParsing` reads of the index options. */
export interface ParsingOptions {
  workers?: number;
  workerThresholdBytes?: number;
  parseTimeoutMs?: number;
}

/**
 * Default worker count: the cores nothing else is using (cores minus the 1-minute load average,
 * rounded up: a core busy part of the time still gives a worker most of its time), at most 4. One
 * worker is no faster than this thread, so fewer than two spare cores means parsing in-process.
 * Measured on 2 shared cores at a load of 0.7 to 1: two workers index 1.6x faster than this thread.
 */
function defaultWorkers(): number {
  const cores = navigator.hardwareConcurrency ?? 1;
  let load = 0;
  try {
    load = Deno.loadavg()[0];
  } catch {
    // Without --allow-sys the load is unknown: assume the cores are free.
  }
  const spare = Math.min(4, cores, Math.ceil(cores - load));
  return spare >= 2 ? spare : 0;
}

/** Workers when there is enough to parse and they start; otherwise this thread. */
export async function startParsing(
  kit: typeof ParseKit,
  candidates: readonly Candidate[],
  options: ParsingOptions,
): Promise<Parsing> {
  const timeoutMs = options.parseTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxWorkers = options.workers ?? defaultWorkers();
  const threshold = options.workerThresholdBytes ?? DEFAULT_WORKER_THRESHOLD;
  const bytes = candidates.reduce((sum, c) => sum + c.size, 0);
  if (bytes < threshold || candidates.length < 2) return new kit.InProcessParsing(timeoutMs);
  if (maxWorkers <= 0) {
    const busy = options.workers === undefined && (navigator.hardwareConcurrency ?? 1) > 1;
    return new kit.InProcessParsing(
      timeoutMs,
      busy ? "no spare cores for parser workers" : undefined,
    );
  }
  const count = Math.min(maxWorkers, Math.ceil(bytes / threshold), candidates.length);
  const languages = grammarsForPaths(candidates.map((c) => c.path));
  try {
    return await kit.WorkerPool.start(count, languages, timeoutMs);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return new kit.InProcessParsing(timeoutMs, `parser workers could not start (${why})`);
  }
}
