/**
 * The code knowledge graph of one workspace: the facade the `ckg` tool and `deft ckg` use. Every
 * search first refreshes the searched folder, so answers follow the files as they are now. A graph
 * opened with `watch` (a long-lived one, such as the tool's) skips that refresh when its file
 * watcher vouches that nothing changed since the last one (see `watch.ts`).
 * Refreshes in one process run one at a time; other processes coordinate through SQLite.
 */
import { dirname, relative } from "node:path";
import { ListingCache } from "./discover.ts";
import { type IndexOptions, type RefreshReport, refreshScope } from "./indexer.ts";
import { graphDatabasePath } from "./location.ts";
import {
  type SearchCommand,
  searchGraph,
  type SearchOptions,
  type SearchResult,
} from "./search.ts";
import { type FileRow, GraphStore } from "./store.ts";
import type { ChangeWatcher } from "./watch.ts";
import { anyNeedle, definitionNeedle, type Needle, searchNeedle } from "./prefilter.ts";
import type { EdgeCommand, EdgeOptions, EdgeResult } from "./edge_search.ts";
import type { Parsing } from "./worker_pool.ts";
import { isInside } from "../policy/workspace.ts";

/** How to open a graph. */
export interface CodeGraphOptions extends IndexOptions {
  /** Folder for the database (default: the user cache folder; see `location.ts`). */
  ckgDir?: string;
  /**
   * Watch the workspace so searches skip the refresh while nothing changes. Worth it for a graph
   * that answers many searches. The watch starts at the second search or refresh, so a graph used
   * once (`deft tool ckg`) never pays for setting it up.
   */
  watch?: boolean;
  /** How long the watcher's word is trusted without a walk (default 10 s; see `TRUST_MS`). */
  watchTrustMs?: number;
  /**
   * Answer first, index later (default true): a search on a folder whose index is missing or
   * stale parses only the files holding the name's bytes (see `prefilter.ts`).
   */
  answerFirst?: boolean;
  /**
   * After a search answered from a partial index, finish indexing in the background, in slices
   * that let searches in between (default false: a one-shot process would not live to use it).
   */
  background?: boolean;
  /** Source bytes per background slice (default 2 MB). */
  backgroundSliceBytes?: number;
}

/** Bytes of changed source one background slice reads before letting a search in. */
const BACKGROUND_SLICE_BYTES = 2 * 1024 * 1024;

/** What a complete refresh of a scope saw: the watcher's generation and the database's version. */
interface Freshness {
  generation: number;
  dataVersion: number;
  /** When (performance.now()) the state was read. */
  at: number;
}

/**
 * How long a watcher's word is trusted without a walk. Some file systems never tell a watcher
 * about changes made elsewhere (network mounts, a container's view of host folders), so even
 * then a search is at most this stale; bursts of searches, the case worth speeding up, stay fast.
 */
const TRUST_MS = 10_000;

/** Totals under a scope, from the database. */
export interface GraphTotals {
  files: number;
  indexed: number;
  skipped: FileRow[];
  failed: FileRow[];
  withSyntaxErrors: number;
  symbols: Record<string, number>;
}

/** A workspace's graph, backed by its database. */
export class CodeGraph {
  readonly #store: GraphStore;
  readonly #options: CodeGraphOptions;
  readonly #listings = new ListingCache();
  #listingsLoaded = false;
  #watcher: ChangeWatcher | undefined;
  #settles = 0;
  readonly #fresh = new Map<string, Freshness>();
  #queue: Promise<unknown> = Promise.resolve();
  /** Scopes whose index a search left partial, to finish in the background. */
  readonly #unfinished = new Set<string>();
  #background: Promise<void> | undefined;
  #closed = false;

  private constructor(
    readonly workspace: string,
    readonly databasePath: string,
    /** Set when the database could not live on disk and the graph is in memory. */
    readonly databaseNote: string | undefined,
    store: GraphStore,
    options: CodeGraphOptions,
  ) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Opens the graph of `workspace` (an absolute real path). When its database cannot be created
   * on disk, the graph lives in memory for this process and `databaseNote` says why.
   */
  static open(workspace: string, options: CodeGraphOptions = {}): CodeGraph {
    const path = graphDatabasePath(workspace, options.ckgDir);
    try {
      Deno.mkdirSync(dirname(path), { recursive: true });
      return new CodeGraph(workspace, path, undefined, GraphStore.open(path, workspace), options);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const note = `could not use ${path} (${why}); the graph is kept in memory`;
      return new CodeGraph(
        workspace,
        ":memory:",
        note,
        GraphStore.open(":memory:", workspace),
        options,
      );
    }
  }

  /** The scope of `dir` (absolute, inside the workspace): its path relative to the workspace. */
  scopeOf(dir: string): string {
    if (!isInside(this.workspace, dir)) {
      throw new Error(`${dir} is outside the workspace ${this.workspace}.`);
    }
    return relative(this.workspace, dir).split("\\").join("/");
  }

  /** Brings the graph of `dir` (default: the whole workspace) up to date. */
  refresh(dir: string = this.workspace, options: IndexOptions = {}): Promise<RefreshReport> {
    const scope = this.scopeOf(dir);
    return this.#serially(async () => {
      const freshness = await this.#settle();
      return await this.#refreshScope(scope, freshness, options);
    });
  }

  /** Brings `dir` up to date (unless the watcher vouches it is), then searches it for `identifier`. */
  search(
    command: SearchCommand,
    identifier: string,
    dir: string = this.workspace,
    options: SearchOptions = { body: true },
  ): Promise<SearchResult> {
    const scope = this.scopeOf(dir);
    return this.#serially(async () => {
      const freshness = await this.#settle();
      const prepared = await this.#prepare(
        scope,
        freshness,
        [identifier],
        (name) => definitionNeedle(name, command),
      );
      const complete = prepared.complete;
      const result = await searchGraph(
        this.#store,
        this.workspace,
        scope,
        command,
        identifier,
        options,
      );
      if (complete) return result;
      if (result.matches.length > 0) {
        this.#finishLater(scope);
        return result;
      }
      // No file the index does not cover holds the name's bytes, and the index knows no symbol
      // or use of it: the whole index could not find it either, so say so at once. Close names
      // come from what is indexed so far.
      const name = searchNeedle(identifier).text;
      if (prepared.holding === 0 && !this.#mentions(identifier, scope)) {
        this.#finishLater(scope);
        return { ...result, absent: { name, scanned: prepared.deferred } };
      }
      // A miss where some file holds the name is answered with close names and unindexed files:
      // those need the whole index.
      await this.#refreshScope(scope, freshness);
      return await searchGraph(this.#store, this.workspace, scope, command, identifier, options);
    });
  }

  /**
   * Brings `dir` up to date as far as an answer about `identifier` needs, then follows the graph's
   * edges from it: references, callers or subclasses.
   */
  searchEdges(
    command: EdgeCommand,
    identifier: string,
    dir: string = this.workspace,
    options: EdgeOptions = { body: true },
  ): Promise<EdgeResult> {
    const scope = this.scopeOf(dir);
    return this.#serially(async () => {
      // Loaded on the first edge search: a definition search never needs it.
      const { searchEdges } = await import("./edge_search.ts");
      const freshness = await this.#settle();
      const names = [identifier];
      const prepared = await this.#prepare(scope, freshness, names);
      let complete = prepared.complete;
      let result = await searchEdges(
        this.#store,
        this.workspace,
        scope,
        command,
        identifier,
        options,
      );
      // Indirect subclasses name classes found on the way, Rust impls name their types: the
      // files holding those must be parsed too.
      while (!complete) {
        const more = result.follow.filter((name) => !names.includes(name));
        if (more.length === 0) break;
        names.push(...more);
        complete = (await this.#prepare(scope, freshness, more)).complete;
        result = await searchEdges(
          this.#store,
          this.workspace,
          scope,
          command,
          identifier,
          options,
        );
      }
      if (!complete) this.#finishLater(scope);
      const name = searchNeedle(identifier).text;
      if (
        !prepared.complete && prepared.holding === 0 && names.length === 1 &&
        !this.#mentions(identifier, scope)
      ) {
        // As for a definition search: no file holds the name, so say so.
        result.absent = { name, scanned: prepared.deferred };
      }
      return result;
    });
  }

  /**
   * Makes the index of `scope` answer for `names`: fully refreshed, or (answer first) with the
   * files holding those names parsed. Says whether the whole scope is now indexed, and how many
   * files it read hold the names' bytes and how many it left for later.
   */
  async #prepare(
    scope: string,
    freshness: Freshness | undefined,
    names: readonly string[],
    needleOf: (name: string) => Needle = searchNeedle,
  ): Promise<{ complete: boolean; holding: number; deferred: number }> {
    if (freshness && this.#isFresh(scope, freshness)) {
      return { complete: true, holding: 0, deferred: 0 };
    }
    const prefilter = this.#options.answerFirst === false
      ? undefined
      : anyNeedle(names.map(needleOf));
    const report = await this.#refreshScope(scope, freshness, { prefilter });
    return { complete: report.deferred === 0, holding: report.holding, deferred: report.deferred };
  }

  /**
   * Whether the index has a symbol or reference named `identifier` or its member (`Cls.method`
   * is stored as `method`, `[Symbol.iterator]` as itself).
   */
  #mentions(identifier: string, scope: string): boolean {
    const member = searchNeedle(identifier).text;
    return this.#store.mentions(identifier, scope) ||
      (member !== identifier && this.#store.mentions(member, scope));
  }

  /** Whether a background index is still under way. */
  get indexing(): boolean {
    return this.#background !== undefined;
  }

  /** Resolves when the background index (if any) has finished. */
  async settled(): Promise<void> {
    while (this.#background) await this.#background;
  }

  #finishLater(scope: string): void {
    if (!this.#options.background || this.#closed) return;
    this.#unfinished.add(scope);
    this.#background ??= this.#indexInBackground().finally(() => this.#background = undefined);
  }

  /**
   * Indexes the unfinished scopes slice by slice, each slice in the queue like a search, so a
   * search waits for one slice at most. Parser workers started by the first slice serve the rest.
   */
  async #indexInBackground(): Promise<void> {
    let parsing: Parsing | undefined;
    try {
      while (!this.#closed && this.#unfinished.size > 0) {
        const scope: string = this.#unfinished.values().next().value!;
        // Let a search that arrived meanwhile go first.
        await new Promise((resolve) => setTimeout(resolve, 0));
        const report = await this.#serially(async () => {
          if (this.#closed) return undefined;
          return await this.#refreshScope(scope, await this.#settle(), {
            budgetBytes: this.#options.backgroundSliceBytes ?? BACKGROUND_SLICE_BYTES,
            parsing,
            keepParsing: parsing === undefined,
          });
        });
        if (!report) break;
        parsing ??= report.parsing;
        if (report.remaining === 0 && report.deferred === 0) this.#unfinished.delete(scope);
      }
    } catch {
      // The next search refreshes what it needs itself; a background failure loses nothing.
      this.#unfinished.clear();
    } finally {
      parsing?.close();
    }
  }

  /**
   * Whether a file watcher keeps track of changes, so unchanged searches skip the walk (from the
   * second search or refresh on, for a graph opened with `watch`).
   */
  get watching(): boolean {
    return this.#watcher !== undefined;
  }

  /** Searches `dir` as the database holds it, without refreshing first. */
  lookup(
    command: SearchCommand,
    identifier: string,
    dir: string = this.workspace,
    options: SearchOptions = { body: true },
  ): Promise<SearchResult> {
    const scope = this.scopeOf(dir);
    return this.#serially(() =>
      searchGraph(this.#store, this.workspace, scope, command, identifier, options)
    );
  }

  /** Totals of `dir` as the database holds them (no refresh). */
  totals(dir: string = this.workspace): GraphTotals {
    const scope = this.scopeOf(dir);
    const files = [...this.#store.filesUnder(scope).values()].sort((a, b) =>
      a.path.localeCompare(b.path)
    );
    return {
      files: files.length,
      indexed: files.filter((f) => f.status === "indexed").length,
      skipped: files.filter((f) => f.status === "skipped"),
      failed: files.filter((f) => f.status === "failed"),
      withSyntaxErrors: files.filter((f) => f.hasErrors).length,
      symbols: this.#store.countSymbols(scope),
    };
  }

  /** Stops the watcher and the background index, and closes the database. */
  close(): void {
    this.#closed = true;
    this.#watcher?.close();
    this.#store.close();
  }

  /** The state every change made so far is counted in, or undefined when nobody can vouch. */
  async #settle(): Promise<Freshness | undefined> {
    // Started before the refresh that follows, so no change can fall between it and the watch.
    if (++this.#settles === 2 && this.#options.watch && this.databasePath !== ":memory:") {
      const { ChangeWatcher } = await import("./watch.ts");
      // A graph closed while the module loaded starts no watcher (it would outlive the graph).
      if (!this.#closed) {
        this.#watcher = ChangeWatcher.start(this.workspace, dirname(this.databasePath));
      }
    }
    if (!this.#watcher || !(await this.#watcher.settle())) return undefined;
    return {
      generation: this.#watcher.generation,
      dataVersion: this.#store.dataVersion(),
      at: performance.now(),
    };
  }

  /** Whether `scope`, or a folder holding it, was refreshed completely in the state `now`. */
  #isFresh(scope: string, now: Freshness): boolean {
    for (let s: string | undefined = scope; s !== undefined; s = parentScope(s)) {
      const seen = this.#fresh.get(s);
      if (
        seen?.generation === now.generation && seen.dataVersion === now.dataVersion &&
        now.at - seen.at < (this.#options.watchTrustMs ?? TRUST_MS)
      ) return true;
    }
    return false;
  }

  async #refreshScope(
    scope: string,
    before: Freshness | undefined,
    options: IndexOptions = {},
  ): Promise<RefreshReport> {
    // The listings the database keeps: a fresh process walks an unchanged tree without reading
    // its folders.
    if (!this.#listingsLoaded) {
      this.#listingsLoaded = true;
      this.#listings.load(this.#store.listings());
    }
    const report = await refreshScope(this.#store, this.workspace, scope, {
      listings: this.#listings,
      ...this.#options,
      ...options,
    });
    this.#store.saveListings(this.#listings.changed());
    // Changes during the refresh (files, or another process's commits) move the state past
    // `before`, so the next search walks again. A partial refresh vouches for nothing.
    if (before && report.deferred === 0 && report.remaining === 0) this.#fresh.set(scope, before);
    return report;
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/** The scope that holds `scope` ("" holds everything; it has none). */
function parentScope(scope: string): string | undefined {
  if (scope === "") return undefined;
  const slash = scope.lastIndexOf("/");
  return slash < 0 ? "" : scope.slice(0, slash);
}
