/**
 * The code knowledge graph of one workspace: the facade the `ckg` tool and `deft ckg` use. Every
 * search first refreshes the searched folder, so answers follow the files as they are now.
 * Refreshes in one process run one at a time; other processes coordinate through SQLite.
 */
import { mkdirSync } from "node:fs";
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
import { isInside } from "../policy/workspace.ts";

/** How to open a graph. */
export interface CodeGraphOptions extends IndexOptions {
  /** Folder for the database (default: the user cache folder; see `location.ts`). */
  ckgDir?: string;
}

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
  #queue: Promise<unknown> = Promise.resolve();

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
      mkdirSync(dirname(path), { recursive: true });
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
    return this.#serially(() =>
      refreshScope(this.#store, this.workspace, scope, {
        listings: this.#listings,
        ...this.#options,
        ...options,
      })
    );
  }

  /** Refreshes `dir`, then searches it for `identifier`. */
  search(
    command: SearchCommand,
    identifier: string,
    dir: string = this.workspace,
    options: SearchOptions = { body: true },
  ): Promise<SearchResult> {
    const scope = this.scopeOf(dir);
    return this.#serially(async () => {
      await refreshScope(this.#store, this.workspace, scope, {
        listings: this.#listings,
        ...this.#options,
      });
      return await searchGraph(this.#store, this.workspace, scope, command, identifier, options);
    });
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

  /** Closes the database. */
  close(): void {
    this.#store.close();
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
