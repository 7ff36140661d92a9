/**
 * Reading one source file for the indexer: its stat (a link only to a regular file inside the
 * workspace), and its bytes judged against what is stored: gone, unchanged, not worth parsing,
 * held back by the answer-first filter, or ready to parse. The indexer (indexer.ts) decides what
 * to read and writes what this returns.
 */
import { contentHash, decodeSource, MAX_SOURCE_BYTES, skipReason } from "./content.ts";
import { type GrammarId, languageFor } from "./languages.ts";
import type { FileRecord, FileRow } from "./store.ts";
import { isInside } from "../policy/workspace.ts";
import type { Needle } from "./prefilter.ts";

/** File access the indexer needs; tests replace it to simulate races and unreadable files. */
export interface SourceFs {
  lstat(path: string): Deno.FileInfo;
  stat(path: string): Deno.FileInfo;
  realPath(path: string): string;
  readFile(path: string): Promise<Uint8Array>;
}

/** The real file system. */
export const REAL_FS: SourceFs = {
  lstat: (path) => Deno.lstatSync(path),
  stat: (path) => Deno.statSync(path),
  realPath: (path) => Deno.realPathSync(path),
  readFile: (path) => Deno.readFile(path),
};

/** A file whose mtime is this recent may change again within the same mtime tick. */
const RACY_WINDOW_MS = 2000;

export interface Candidate {
  path: string;
  abs: string;
  size: number;
  mtimeMs: number;
  row?: FileRow;
}

export interface Pending {
  record: FileRecord;
  text: string;
  lang: GrammarId;
}

/**
 * The file's stat, following a symlink only to a regular file inside the workspace; undefined
 * when it is not (or no longer) a source file, an error when it exists but cannot be examined.
 */
export function statSource(
  fs: SourceFs,
  root: string,
  abs: string,
): Deno.FileInfo | { error: string } | undefined {
  try {
    const info = fs.lstat(abs);
    if (info.isFile) return info;
    if (!info.isSymlink) return undefined;
    const real = fs.realPath(abs);
    if (!isInside(root, real)) return undefined;
    const target = fs.stat(real);
    return target.isFile ? target : undefined;
  } catch (e) {
    // Vanished since the listing, a dangling link or a link loop: not a source file now.
    if (e instanceof Deno.errors.NotFound || isLinkLoop(e)) return undefined;
    return { error: `cannot read: ${describeError(e)}` };
  }
}

function isLinkLoop(e: unknown): boolean {
  return e instanceof Error &&
    /too many levels of symbolic links|ELOOP|os error 40/i.test(e.message);
}

export function failedRecord(
  path: string,
  row: FileRow | undefined,
  size: number,
  mtimeMs: number,
  error: string,
): FileRecord {
  return {
    path,
    language: row?.language ?? "",
    size,
    mtimeMs,
    hash: "",
    status: "failed",
    note: error,
    hasErrors: false,
    racy: false,
  };
}

export function isRacy(mtimeMs: number): boolean {
  return Date.now() - mtimeMs < RACY_WINDOW_MS;
}

export type ReadOutcome =
  | { kind: "gone" }
  | { kind: "deferred"; held: boolean }
  | { kind: "same" }
  | { kind: "record"; record: FileRecord }
  | { kind: "parse"; pending: Pending };

export async function readCandidate(
  fs: SourceFs,
  candidate: Candidate,
  needle?: Needle,
): Promise<ReadOutcome> {
  const { path, abs, row } = candidate;
  if (candidate.size > MAX_SOURCE_BYTES) {
    // Not worth reading: the stat already says it will not be parsed.
    return {
      kind: "record",
      record: {
        path,
        language: "",
        size: candidate.size,
        mtimeMs: candidate.mtimeMs,
        hash: "",
        status: "skipped",
        note: skipReason(new Uint8Array(0), candidate.size) ?? "",
        hasErrors: false,
        racy: isRacy(candidate.mtimeMs),
      },
    };
  }
  let bytes: Uint8Array;
  // The prefilter turns most files away: those are read into one reused buffer, which saves
  // allocating (and collecting) a buffer per file, most of the cost of reading them.
  const shared = needle !== undefined && fs === REAL_FS && candidate.size <= SHARED_READ_MAX;
  try {
    bytes = shared ? readShared(abs, candidate.size) : await fs.readFile(abs);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { kind: "gone" };
    const error = `cannot read: ${describeError(e)}`;
    return {
      kind: "record",
      record: failedRecord(path, row, candidate.size, candidate.mtimeMs, error),
    };
  }
  // A new file without the name waits; it needs no hash for that.
  if (needle && !row && !needle.test(bytes, path)) {
    return { kind: "deferred", held: needle.holds?.(bytes) ?? false };
  }
  // Kept past this file (hashed, parsed): its own copy, since the next read reuses the buffer.
  if (shared) bytes = bytes.slice();
  // The size may differ from the stat when the file changed in between; the bytes are the truth.
  const size = bytes.length;
  const hash = await contentHash(bytes);
  const racy = isRacy(candidate.mtimeMs);
  if (row && row.hash === hash && row.status !== "failed") {
    return { kind: "same" };
  }
  if (needle && !needle.test(bytes, path)) {
    return { kind: "deferred", held: needle.holds?.(bytes) ?? false };
  }
  const base = { path, size, mtimeMs: candidate.mtimeMs, hash, hasErrors: false, racy };
  const reason = skipReason(bytes);
  if (reason) {
    return {
      kind: "record",
      record: { ...base, language: "", status: "skipped", note: reason },
    };
  }
  const text = decodeSource(bytes);
  const lang = languageFor(path, text);
  if (!lang) {
    return {
      kind: "record",
      record: { ...base, language: "", status: "skipped", note: "not a supported language" },
    };
  }
  return {
    kind: "parse",
    pending: { record: { ...base, language: lang, status: "indexed", note: null }, text, lang },
  };
}

/** Files up to this size are read into the shared buffer by the prefilter. */
const SHARED_READ_MAX = 4 * 1024 * 1024;
let sharedBuffer = new Uint8Array(256 * 1024);

/**
 * Reads the file at `path` whole into the shared buffer and returns the bytes read: valid until
 * the next call. `size` (from the stat) sizes the buffer; a file that grew since is read whole.
 */
function readShared(path: string, size: number): Uint8Array {
  if (sharedBuffer.length <= size) {
    sharedBuffer = new Uint8Array(Math.max(size + 1, sharedBuffer.length * 2));
  }
  const file = Deno.openSync(path);
  try {
    let length = 0;
    for (;;) {
      if (length === sharedBuffer.length) {
        const grown = new Uint8Array(sharedBuffer.length * 2);
        grown.set(sharedBuffer);
        sharedBuffer = grown;
      }
      const read = file.readSync(sharedBuffer.subarray(length));
      if (read === null) return sharedBuffer.subarray(0, length);
      length += read;
    }
  } finally {
    file.close();
  }
}

function describeError(e: unknown): string {
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.NotCapable) return "Deno permissions do not allow reading it";
  return e instanceof Error ? e.message : String(e);
}
