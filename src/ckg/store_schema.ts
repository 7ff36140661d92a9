/**
 * The graph database's layout: its schema and version, the rows it stores, and the columns its
 * queries read them back as. store.ts opens, migrates and queries it.
 */
import type { SymbolKind } from "./extract.ts";
import type { RefKind } from "./edges.ts";

/**
 * Bumped whenever the schema or the extraction changes, so an old database is rebuilt instead of
 * answering from symbols an older Deft extracted. Version 2 added references (the `refs` table):
 * a version 1 database is migrated by rebuilding it, since every file must be parsed again to
 * find its references. Version 3 records the anonymous function around a reference no named
 * function encloses, and extracts more edges (calls in Rust macro arguments, re-exports) and
 * fewer false C definitions.
 */
export const SCHEMA_VERSION = 3;

/** Whether a tracked file contributed symbols. */
export type FileStatus = "indexed" | "skipped" | "failed";

/** A tracked file. `path` is relative to the workspace root. */
export interface FileRow {
  id: number;
  path: string;
  language: string;
  size: number;
  mtimeMs: number;
  hash: string;
  status: FileStatus;
  /** Why a file was skipped or failed. */
  note: string | null;
  symbols: number;
  hasErrors: boolean;
  /** Modified so close to when it was read that an equal mtime proves nothing: hash next time. */
  racy: boolean;
}

/** What to record about one file. */
export type FileRecord = Omit<FileRow, "id" | "symbols">;

/** A symbol as stored, joined with its file. */
export interface SymbolRow {
  id: number;
  fileId: number;
  path: string;
  language: string;
  kind: SymbolKind;
  subkind: string | null;
  name: string;
  className: string | null;
  parentFunction: string | null;
  parentId: number | null;
  startLine: number;
  endLine: number;
  startOffset: number;
  endOffset: number;
  signature: string;
}

/**
 * Folder listings the walk keeps (see discover.ts `ListingCache`): per folder its mtime and the
 * entries the walk looks at, as JSON `[name, flags]` pairs (1 folder, 2 file, 4 link). Created
 * on first use in a database made before it, so it needs no new schema version.
 */
export const LISTINGS_TABLE = `CREATE TABLE IF NOT EXISTS listings (
  dir TEXT PRIMARY KEY,
  mtime_ms REAL NOT NULL,
  entries TEXT NOT NULL
)`;

/**
 * The indexes of the refs table, which a first index of a large tree builds once at the end
 * instead of row by row (see `GraphStore.suspendRefIndexes`).
 */
export const REF_INDEXES = `CREATE INDEX IF NOT EXISTS refs_by_name ON refs(name, kind);
CREATE INDEX IF NOT EXISTS refs_by_file ON refs(file_id);`;

export const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  language TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ms REAL NOT NULL,
  hash TEXT NOT NULL,
  status TEXT NOT NULL,
  note TEXT,
  symbols INTEGER NOT NULL DEFAULT 0,
  has_errors INTEGER NOT NULL DEFAULT 0,
  racy INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE symbols (
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id),
  kind TEXT NOT NULL,
  subkind TEXT,
  name TEXT NOT NULL,
  class_name TEXT,
  parent_function TEXT,
  parent_id INTEGER,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  signature TEXT NOT NULL
);
CREATE INDEX symbols_by_name ON symbols(name, kind);
CREATE INDEX symbols_by_class ON symbols(class_name) WHERE class_name IS NOT NULL;
CREATE INDEX symbols_by_parent ON symbols(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX symbols_by_file ON symbols(file_id);
CREATE TABLE refs (
  file_id INTEGER NOT NULL REFERENCES files(id),
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  derived TEXT,
  line INTEGER NOT NULL,
  col INTEGER NOT NULL,
  start_offset INTEGER NOT NULL,
  end_offset INTEGER NOT NULL,
  symbol_id INTEGER,
  anon_start INTEGER,
  anon_end INTEGER,
  anon_start_line INTEGER,
  anon_end_line INTEGER
);
${REF_INDEXES}
${LISTINGS_TABLE};
`;

/** A reference as stored, joined with its file and its enclosing symbol (when there is one). */
export interface RefRow {
  path: string;
  language: string;
  kind: RefKind;
  name: string;
  derived: string | null;
  line: number;
  column: number;
  startOffset: number;
  endOffset: number;
  symbolId: number | null;
  /** The anonymous function around it when no named function or method encloses it. */
  anonStart: number | null;
  anonEnd: number | null;
  anonStartLine: number | null;
  anonEndLine: number | null;
}

export const SYMBOL_COLUMNS =
  `s.id AS id, s.file_id AS fileId, f.path AS path, f.language AS language,
  s.kind AS kind, s.subkind AS subkind, s.name AS name, s.class_name AS className,
  s.parent_function AS parentFunction, s.parent_id AS parentId, s.start_line AS startLine,
  s.end_line AS endLine, s.start_offset AS startOffset, s.end_offset AS endOffset,
  s.signature AS signature`;

export const FILE_COLUMNS =
  `id, path, language, size, mtime_ms AS mtimeMs, hash, status, note, symbols,
  has_errors AS hasErrors, racy`;
