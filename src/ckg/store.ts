/**
 * The graph's SQLite database (node:sqlite): one per workspace, WAL mode so readers in other
 * processes keep reading while one process writes. Files are tracked by size, mtime and content
 * hash; symbols point at their file and, when nested, at their enclosing symbol. Every lookup
 * binds its values as parameters and compares names with `=` or index ranges. The one `LIKE`
 * (close names, `namesNear`) binds its pattern too, made by `holding`, which escapes `%`, `_` and
 * the escape character `\` itself: a piece full of them matches only itself. No GLOB.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { ExtractedSymbol, SymbolKind } from "./extract.ts";
import type { ExtractedRef, RefKind } from "./edges.ts";

import type { Listing } from "./discover.ts";
import {
  FILE_COLUMNS,
  type FileRecord,
  type FileRow,
  LISTINGS_TABLE,
  REF_INDEXES,
  type RefRow,
  SCHEMA,
  SCHEMA_VERSION,
  SYMBOL_COLUMNS,
  type SymbolRow,
} from "./store_schema.ts";
import { writeFile } from "./store_write.ts";

export type { FileRecord, FileRow, FileStatus, RefRow, SymbolRow } from "./store_schema.ts";

/** Raised when the database cannot be opened or created. */
export class GraphStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "GraphStoreError";
  }
}

/** The SQL condition (on `alias.path`) and parameters that keep rows inside `scope`. */
function scopeFilter(scope: string, alias: string): { sql: string; params: string[] } {
  if (scope === "") return { sql: "1", params: [] };
  // Paths under "a/b" sort between "a/b/" and "a/b0" ("0" follows "/"): a range the path index
  // serves, with no pattern characters to escape.
  return {
    sql: `(${alias}.path >= ? AND ${alias}.path < ?)`,
    params: [`${scope}/`, `${scope}0`],
  };
}

/** The graph database of one workspace. */
export class GraphStore {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #inTransaction = false;
  /** File rows by scope, valid while no connection (this one included) has written since. */
  readonly #filesCache = new Map<string, Map<string, FileRow>>();
  #cachedDataVersion = -1;

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Opens (creating or rebuilding as needed) the database at `path`, or an in-memory one for
   * ":memory:". A file that is not a database, or holds another schema version, is rebuilt.
   */
  static open(path: string, workspace: string): GraphStore {
    try {
      return GraphStore.#openOnce(path, workspace);
    } catch (e) {
      if (path === ":memory:" || !isCorrupt(e)) throw wrapOpenError(path, e);
    }
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        Deno.removeSync(path + suffix);
      } catch {
        // already gone
      }
    }
    try {
      return GraphStore.#openOnce(path, workspace);
    } catch (e) {
      throw wrapOpenError(path, e);
    }
  }

  static #openOnce(path: string, workspace: string): GraphStore {
    const db = new DatabaseSync(path);
    try {
      db.exec("PRAGMA busy_timeout = 10000");
      if (path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA synchronous = NORMAL");
      const store = new GraphStore(db);
      store.#ensureSchema(workspace);
      return store;
    } catch (e) {
      db.close();
      throw e;
    }
  }

  #ensureSchema(workspace: string): void {
    const version = this.#schemaVersion();
    if (version === SCHEMA_VERSION) {
      // A first index that stopped before building them again (see `suspendRefIndexes`).
      try {
        if (!this.#hasRefIndexes()) this.restoreRefIndexes();
      } catch {
        // Busy or read-only: searches stay right without them, and the next open tries again.
      }
      return;
    }
    // Building the empty schema need not wait for the disk: a crash that loses it leaves a file
    // without the version row (or a corrupt one), which the next open rebuilds.
    this.#db.exec("PRAGMA synchronous = OFF");
    try {
      this.#createSchema(workspace);
    } finally {
      this.#db.exec("PRAGMA synchronous = NORMAL");
    }
  }

  #createSchema(workspace: string): void {
    this.transaction(() => {
      // Re-check under the write lock: another process may have just built it.
      if (this.#schemaVersion() === SCHEMA_VERSION) return;
      for (const table of ["refs", "symbols", "files", "meta"]) {
        this.#db.exec(`DROP TABLE IF EXISTS ${table}`);
      }
      this.#db.exec(SCHEMA);
      const put = this.#db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
      put.run("schema_version", String(SCHEMA_VERSION));
      put.run("workspace", workspace);
      put.run("created", new Date().toISOString());
    });
  }

  #schemaVersion(): number | undefined {
    const table = this.#db.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
    ).get();
    if (!table) return undefined;
    const row = this.#db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as
      | { value: string }
      | undefined;
    return row ? Number(row.value) : undefined;
  }

  #prepare(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` in one write transaction (taking the write lock up front). */
  transaction<T>(fn: () => T): T {
    if (this.#inTransaction) return fn();
    this.#filesCache.clear();
    this.#db.exec("BEGIN IMMEDIATE");
    this.#inTransaction = true;
    try {
      const result = fn();
      this.#db.exec("COMMIT");
      return result;
    } catch (e) {
      this.#db.exec("ROLLBACK");
      throw e;
    } finally {
      this.#inTransaction = false;
    }
  }

  /**
   * Tracked files under `scope` ("" for the whole workspace), by path. The map is shared with
   * later calls until something writes: do not change it.
   */
  /** Moves when another connection commits (this connection's own commits leave it alone). */
  dataVersion(): number {
    return (this.#prepare("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  filesUnder(scope: string): ReadonlyMap<string, FileRow> {
    // This connection's writes clear the cache themselves.
    const version = this.dataVersion();
    if (version !== this.#cachedDataVersion) {
      this.#filesCache.clear();
      this.#cachedDataVersion = version;
    }
    const cached = this.#filesCache.get(scope);
    if (cached) return cached;
    const filter = scopeFilter(scope, "files");
    const rows = this.#prepare(`SELECT ${FILE_COLUMNS} FROM files WHERE ${filter.sql}`).all(
      ...filter.params,
    ) as unknown as FileRow[];
    const byPath = new Map<string, FileRow>();
    for (const row of rows) {
      row.hasErrors = Boolean(row.hasErrors);
      row.racy = Boolean(row.racy);
      byPath.set(row.path, row);
    }
    this.#filesCache.set(scope, byPath);
    return byPath;
  }

  /** Whether the refs table holds no row at all. */
  refsEmpty(): boolean {
    return this.#prepare("SELECT 1 FROM refs LIMIT 1").get() === undefined;
  }

  /**
   * For a first index of a large tree: drops the refs indexes, built once at the end by
   * `restoreRefIndexes` (or by the next open, after a crash); searches stay right meanwhile.
   */
  suspendRefIndexes(): void {
    this.transaction(() => {
      this.#db.exec("DROP INDEX IF EXISTS refs_by_name");
      this.#db.exec("DROP INDEX IF EXISTS refs_by_file");
    });
  }

  /** Builds the refs table's indexes when they are missing (see `suspendRefIndexes`). */
  restoreRefIndexes(): void {
    this.transaction(() => this.#db.exec(REF_INDEXES));
  }

  #hasRefIndexes(): boolean {
    const row = this.#prepare(
      `SELECT count(*) AS n FROM sqlite_master
       WHERE type = 'index' AND name IN ('refs_by_name', 'refs_by_file')`,
    ).get() as { n: number };
    return row.n === 2;
  }

  /** Records a file and replaces its symbols and references (none for skipped or failed files). */
  putFile(
    record: FileRecord,
    symbols: readonly ExtractedSymbol[],
    refs: readonly ExtractedRef[] = [],
  ): void {
    this.transaction(() => writeFile((sql) => this.#prepare(sql), record, symbols, refs));
  }

  /** References of `kinds` to exactly `name` under `scope`, in path and position order. */
  refsNamed(name: string, kinds: readonly RefKind[], scope: string): RefRow[] {
    const filter = scopeFilter(scope, "f");
    const marks = kinds.map(() => "?").join(", ");
    return this.#prepare(
      `SELECT f.path AS path, f.language AS language, r.kind AS kind, r.name AS name,
       r.derived AS derived, r.line AS line, r.col AS "column", r.start_offset AS startOffset,
       r.end_offset AS endOffset, r.symbol_id AS symbolId, r.anon_start AS anonStart,
       r.anon_end AS anonEnd, r.anon_start_line AS anonStartLine, r.anon_end_line AS anonEndLine
       FROM refs r JOIN files f ON f.id = r.file_id
       WHERE r.name = ? AND r.kind IN (${marks}) AND ${filter.sql}
       ORDER BY f.path, r.start_offset`,
    ).all(name, ...kinds, ...filter.params) as unknown as RefRow[];
  }

  /** The symbol with id `id`, with its file. */
  symbolById(id: number): SymbolRow | undefined {
    return this.#prepare(
      `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?`,
    ).get(id) as unknown as SymbolRow | undefined;
  }

  /** Updates what changed about a file whose content did not (a touch, a copy back). */
  updateFileStat(id: number, size: number, mtimeMs: number, racy: boolean): void {
    this.#filesCache.clear();
    this.#prepare("UPDATE files SET size = ?, mtime_ms = ?, racy = ? WHERE id = ?").run(
      size,
      mtimeMs,
      racy ? 1 : 0,
      id,
    );
  }

  /** Forgets files (and their symbols). */
  removeFiles(ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.transaction(() => {
      const symbols = this.#prepare("DELETE FROM symbols WHERE file_id = ?");
      const refs = this.#prepare("DELETE FROM refs WHERE file_id = ?");
      const files = this.#prepare("DELETE FROM files WHERE id = ?");
      for (const id of ids) {
        symbols.run(id);
        refs.run(id);
        files.run(id);
      }
    });
  }

  /** Symbols of `kinds` named exactly `name` under `scope`, in path and line order. */
  symbolsNamed(name: string, kinds: readonly SymbolKind[], scope: string): SymbolRow[] {
    const filter = scopeFilter(scope, "f");
    const marks = kinds.map(() => "?").join(", ");
    return this.#prepare(
      `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE s.name = ? AND s.kind IN (${marks}) AND ${filter.sql}
       ORDER BY f.path, s.start_line, s.start_offset`,
    ).all(name, ...kinds, ...filter.params) as unknown as SymbolRow[];
  }

  /** Whether any symbol or reference under `scope` is named exactly `name`. */
  mentions(name: string, scope: string): boolean {
    const filter = scopeFilter(scope, "f");
    const symbol = this.#prepare(
      `SELECT 1 FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE s.name = ? AND ${filter.sql} LIMIT 1`,
    ).get(name, ...filter.params);
    if (symbol) return true;
    return this.#prepare(
      `SELECT 1 FROM refs r JOIN files f ON f.id = r.file_id
       WHERE r.name = ? AND ${filter.sql} LIMIT 1`,
    ).get(name, ...filter.params) !== undefined;
  }

  /** Members (fields, methods, prototypes) declared inside the class symbol `classId`. */
  membersOf(classId: number): SymbolRow[] {
    return this.#prepare(
      `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE s.parent_id = ? AND s.kind IN ('field', 'method', 'prototype')
       ORDER BY s.start_offset`,
    ).all(classId) as unknown as SymbolRow[];
  }

  /** Methods that name `className` as their class, wherever they are defined. */
  methodsOfClassName(className: string): SymbolRow[] {
    return this.#prepare(
      `SELECT ${SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE s.class_name = ? AND s.kind = 'method'
       ORDER BY f.path, s.start_offset`,
    ).all(className) as unknown as SymbolRow[];
  }

  /** Classes named exactly `name` (in any scope), for attaching out-of-body methods. */
  classesNamed(name: string): SymbolRow[] {
    return this.symbolsNamed(name, ["class"], "");
  }

  /**
   * Distinct names (with their kind) under `scope` that start with `name`: an index range.
   */
  namesStartingWith(
    name: string,
    kinds: readonly SymbolKind[],
    scope: string,
    limit: number,
  ): { name: string; kind: SymbolKind }[] {
    return this.#distinctNames(
      "s.name >= ? AND s.name < ?",
      [name, `${name}\u{10FFFF}`],
      kinds,
      scope,
      limit,
    );
  }

  /**
   * Distinct names (with their kind) under `scope` that could be a misspelling of `name` (within
   * `slack` edits, ignoring case) or contain it (ignoring case): one scan, for when a name is
   * missing. A name within `slack` edits holds one of `slack + 1` disjoint pieces of `name`
   * unchanged (each edit touches one piece), so only those are returned: a superset of the names
   * within reach, far fewer than all names of about the same length.
   */
  namesNear(
    name: string,
    kinds: readonly SymbolKind[],
    scope: string,
    slack: number,
    limit: number,
  ): { name: string; kind: SymbolKind }[] {
    const lower = name.toLowerCase();
    const pieces = slack + 1;
    const size = Math.floor(lower.length / pieces);
    // Too short to cut into pieces of a character or more: every name of about the length.
    const cut = size >= 1
      ? Array.from(
        { length: pieces },
        (_, i) => lower.slice(i * size, i === pieces - 1 ? lower.length : (i + 1) * size),
      )
      : [];
    // `LIKE` folds ASCII letters as `lower()` does, without a lowered copy of every name: a
    // lowered piece is in `lower(name)` exactly when `name LIKE '%piece%'` (see `holding`).
    const holds = cut.length > 0
      ? ` AND (${cut.map((piece) => holding(piece)[0]).join(" OR ")})`
      : "";
    // A name that holds `name` and is no longer than `name.length + slack` is within reach, so
    // only longer ones are checked for it (shorter ones cannot hold it): most rows skip `LIKE`.
    // SQLite folds ASCII letters only: a name with other characters (more bytes than
    // characters) is left to the caller.
    const longest = name.length + slack;
    return this.#distinctNames(
      `((length(s.name) BETWEEN ? AND ?${holds}) OR ` +
        `(length(s.name) > ? AND ${holding(lower)[0]}) OR ` +
        `octet_length(s.name) != length(s.name))`,
      [
        Math.max(1, name.length - slack),
        longest,
        ...cut.map((piece) => holding(piece)[1]),
        longest,
        holding(lower)[1],
      ],
      kinds,
      scope,
      limit,
    );
  }

  #distinctNames(
    condition: string,
    params: (string | number)[],
    kinds: readonly SymbolKind[],
    scope: string,
    limit: number,
  ): { name: string; kind: SymbolKind }[] {
    const filter = scopeFilter(scope, "f");
    const marks = kinds.map(() => "?").join(", ");
    // The whole workspace needs no join, so the (name, kind) index alone answers.
    const from = scope === "" ? "symbols s" : "symbols s JOIN files f ON f.id = s.file_id";
    return this.#prepare(
      `SELECT DISTINCT s.name AS name, s.kind AS kind FROM ${from}
       WHERE s.kind IN (${marks}) AND ${filter.sql} AND ${condition} LIMIT ${limit | 0}`,
    ).all(...kinds, ...filter.params, ...params) as unknown as {
      name: string;
      kind: SymbolKind;
    }[];
  }

  /** Files under `scope` that were skipped or failed, for telling why a name may be missing. */
  unindexedFiles(scope: string): FileRow[] {
    const filter = scopeFilter(scope, "files");
    return this.#prepare(
      `SELECT ${FILE_COLUMNS} FROM files WHERE status != 'indexed' AND ${filter.sql} ORDER BY path`,
    ).all(...filter.params) as unknown as FileRow[];
  }

  /** Symbol counts by kind under `scope` (prototypes excluded). */
  countSymbols(scope: string): Record<string, number> {
    const filter = scopeFilter(scope, "f");
    const rows = this.#prepare(
      `SELECT s.kind AS kind, count(*) AS n FROM symbols s JOIN files f ON f.id = s.file_id
       WHERE s.kind != 'prototype' AND ${filter.sql} GROUP BY s.kind`,
    ).all(...filter.params) as unknown as { kind: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
  }

  /** The folder listings kept for the walk; none when they cannot be read. */
  listings(): [string, Listing][] {
    try {
      this.#db.exec(LISTINGS_TABLE);
      const rows = this.#prepare("SELECT dir, mtime_ms AS mtimeMs, entries FROM listings")
        .all() as { dir: string; mtimeMs: number; entries: string }[];
      return rows.map(({ dir, mtimeMs, entries }) => [dir, {
        mtimeMs,
        entries: (JSON.parse(entries) as [string, number][]).map(([name, flags]) => ({
          name,
          isDirectory: (flags & 1) !== 0,
          isFile: (flags & 2) !== 0,
          isSymlink: (flags & 4) !== 0,
        })),
      }]);
    } catch {
      // Kept only to save folder reads: without them the walk reads every folder.
      return [];
    }
  }

  /**
   * Keeps (or, for undefined, forgets) the listings of folders the walk read anew. A database
   * that cannot take them (read-only, locked too long) only costs the next walk its folder reads.
   */
  saveListings(changes: readonly [string, Listing | undefined][]): void {
    if (changes.length === 0) return;
    try {
      this.#saveListings(changes);
    } catch {
      // not kept: nothing depends on them
    }
  }

  #saveListings(changes: readonly [string, Listing | undefined][]): void {
    this.#db.exec(LISTINGS_TABLE);
    this.transaction(() => {
      const put = this.#prepare(
        "INSERT OR REPLACE INTO listings (dir, mtime_ms, entries) VALUES (?, ?, ?)",
      );
      const drop = this.#prepare("DELETE FROM listings WHERE dir = ?");
      for (const [dir, listing] of changes) {
        if (!listing) drop.run(dir);
        else {
          put.run(
            dir,
            listing.mtimeMs,
            JSON.stringify(listing.entries.map((e) => [
              e.name,
              (e.isDirectory ? 1 : 0) | (e.isFile ? 2 : 0) | (e.isSymlink ? 4 : 0),
            ])),
          );
        }
      }
    });
  }

  /** Closes the database. */
  close(): void {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }
}

/**
 * Past this length a LIKE pattern might pass SQLite's limit (50,000 bytes), and LIKE reads a
 * pattern only up to a NUL: for those, `instr`.
 */
const LONGEST_LIKE = 10_000;

/**
 * The SQL condition "`s.name` holds `text`, ignoring ASCII case" and its one parameter: `LIKE
 * '%text%' ESCAPE '\'` with `%`, `_` and `\` in `text` escaped, so they match only themselves
 * (`instr(lower(s.name), text)`, the same and slower, for a very long `text` or one with a NUL).
 */
function holding(text: string): [string, string] {
  if (text.length > LONGEST_LIKE || text.includes("\0")) {
    return ["instr(lower(s.name), ?) > 0", text];
  }
  return ["s.name LIKE ? ESCAPE '\\'", `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`];
}

function isCorrupt(e: unknown): boolean {
  const message = e instanceof Error ? e.message : String(e);
  return /not a database|malformed|file is encrypted/i.test(message);
}

function wrapOpenError(path: string, e: unknown): GraphStoreError {
  const message = e instanceof Error ? e.message : String(e);
  return new GraphStoreError(`Cannot open the code graph database ${path}: ${message}`);
}
