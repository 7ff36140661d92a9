/**
 * `deft ckg index [DIR]` and `deft ckg search-function|search-class|search-class-method NAME`:
 * the code knowledge graph from the command line. Results go to stdout; progress (on a terminal),
 * warnings and errors go to stderr.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { option, type OptionSpec, WORKING_DIR } from "./spec.ts";
import { confine, OutsideWorkspaceError, realWorkspace } from "../policy/workspace.ts";
import type { CodeGraph, GraphTotals } from "../ckg/graph.ts";
import type { RefreshReport } from "../ckg/indexer.ts";
import type { FileRow } from "../ckg/store.ts";
import type { Page } from "../ckg/format.ts";

const LISTED = 10;

async function resolveDirs(
  workspace: string,
  dir: string | undefined,
): Promise<{ root: string; target: string }> {
  const root = await realWorkspace(workspace);
  if (dir === undefined) return { root, target: root };
  let target: string;
  try {
    target = await confine(root, resolve(dir));
  } catch (e) {
    if (e instanceof OutsideWorkspaceError) {
      throw new Error(`${e.message} Choose the workspace with -w/--working-dir.`);
    }
    throw e;
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(target);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`${dir} does not exist.`);
    throw e;
  }
  if (!info.isDirectory) throw new Error(`${dir} is not a directory.`);
  return { root, target };
}

async function openGraph(root: string, onProgress?: (done: number, total: number) => void) {
  const { CodeGraph } = await import("../ckg/graph.ts");
  const graph: CodeGraph = CodeGraph.open(root, { onProgress });
  if (graph.databaseNote) console.error(`deft ckg: warning: ${graph.databaseNote}`);
  return graph;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A progress line that rewrites itself on a terminal, at most ten times a second. */
function terminalProgress(): ((done: number, total: number) => void) | undefined {
  if (!Deno.stderr.isTerminal()) return undefined;
  const encoder = new TextEncoder();
  let last = 0;
  return (done, total) => {
    const now = performance.now();
    if (done < total && now - last < 100) return;
    last = now;
    const line = done < total ? `\rckg: processing ${done}/${total} files` : "\r\x1b[K";
    Deno.stderr.writeSync(encoder.encode(line));
  };
}

/**
 * Indexes `dir` (default: the workspace) and prints a summary of files and symbols. Returns the
 * exit code: 0 when the index is current (files that could not be parsed are listed, not fatal),
 * 1 when indexing could not happen.
 */
export async function ckgIndex(
  dir: string | undefined,
  opts: { workspace: string },
): Promise<number> {
  let graph: CodeGraph | undefined;
  try {
    const { root, target } = await resolveDirs(opts.workspace, dir);
    graph = await openGraph(root, terminalProgress());
    const report = await graph.refresh(target);
    console.log(summary(target, report, graph.totals(target), graph.databasePath));
    return 0;
  } catch (e) {
    console.error(`deft ckg index: ${errorMessage(e)}`);
    return 1;
  } finally {
    graph?.close();
  }
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? word : many}`;
}

function listFiles(title: string, files: readonly FileRow[]): string[] {
  if (files.length === 0) return [];
  const lines = [`${title}:`];
  for (const file of files.slice(0, LISTED)) lines.push(`  ${file.path}: ${file.note ?? ""}`);
  if (files.length > LISTED) lines.push(`  … and ${files.length - LISTED} more`);
  return lines;
}

function listFolders(folders: readonly { path: string; reason: string }[]): string[] {
  if (folders.length === 0) return [];
  const lines = ["Skipped folders (not the project's own code):"];
  for (const folder of folders.slice(0, LISTED)) {
    lines.push(`  ${folder.path}/: ${folder.reason}`);
  }
  if (folders.length > LISTED) lines.push(`  … and ${folders.length - LISTED} more`);
  return lines;
}

function summary(
  target: string,
  report: RefreshReport,
  totals: GraphTotals,
  databasePath: string,
): string {
  const seconds = (report.elapsedMs / 1000).toFixed(2);
  const listed = report.mode === "git"
    ? "files listed by git"
    : "files listed by walking the folder";
  const parsed = report.parser === "none" ? "nothing to parse" : `parsed ${report.parser}`;
  const s = totals.symbols;
  const symbolCount = Object.values(s).reduce((a, b) => a + b, 0);
  const lines = [
    `Indexed ${target} in ${seconds} s (${listed}; ${parsed}).`,
    `Files: ${plural(totals.files, "source file")}: ${
      totals.indexed.toLocaleString("en-US")
    } indexed, ` +
    `${totals.skipped.length.toLocaleString("en-US")} skipped, ` +
    `${totals.failed.length.toLocaleString("en-US")} failed ` +
    `(this run: ${report.parsed.toLocaleString("en-US")} parsed, ` +
    `${(report.unchanged + report.touched).toLocaleString("en-US")} unchanged, ` +
    `${report.removed.toLocaleString("en-US")} removed).`,
    `Symbols: ${symbolCount.toLocaleString("en-US")} (${plural(s.function ?? 0, "function")}, ` +
    `${plural(s.class ?? 0, "class", "classes")}, ${plural(s.method ?? 0, "method")}, ` +
    `${plural(s.field ?? 0, "field")}).`,
    ...listFiles("Skipped (cannot yield definitions)", totals.skipped),
    ...listFiles("Failed", totals.failed),
    ...listFolders(report.skippedDirs),
  ];
  if (totals.withSyntaxErrors === 1) {
    lines.push("1 file has syntax errors (indexed as far as it parses).");
  } else if (totals.withSyntaxErrors > 1) {
    const files = plural(totals.withSyntaxErrors, "file");
    lines.push(`${files} have syntax errors (indexed as far as they parse).`);
  }
  for (const problem of report.problems) lines.push(`Note: ${problem.path}: ${problem.error}`);
  lines.push(`Database: ${databasePath}`);
  return lines.join("\n");
}

/** The flags every search takes. */
export interface SearchFlags {
  workspace: string;
  path?: string;
  body: boolean;
  json: boolean;
  /** Entries of the answer to skip (`--offset`). */
  offset?: number;
  /** The most entries to show (`--limit`). */
  limit?: number;
}

/** The page `--offset`/`--limit` ask for (commander has checked they are whole numbers). */
function pageOf(opts: SearchFlags): Page {
  return { offset: opts.offset ?? 0, limit: opts.limit, cli: true };
}

const COMMAND_OF = {
  function: "search_function",
  class: "search_class",
  "class-method": "search_class_method",
} as const;

/** Whether a page of an answer with `found` entries shows any: a loop over pages ends at 1. */
function shows(found: number, page: Page): boolean {
  return found > page.offset;
}

/**
 * Searches the graph for `name` (refreshing first) and prints Trae-style text, or JSON with
 * `json`; `--offset`/`--limit` print part of a long answer. Returns 0 when the page shows
 * something, 1 when nothing was found (or the offset is past the last entry) or on error.
 */
export async function ckgSearch(
  kind: "function" | "class" | "class-method",
  name: string,
  opts: SearchFlags,
): Promise<number> {
  let graph: CodeGraph | undefined;
  try {
    const identifier = name.trim();
    if (identifier === "") throw new Error("the name to search for is empty.");
    const { root, target } = await resolveDirs(opts.workspace, opts.path);
    graph = await openGraph(root);
    const { formatSearchText, searchJson, OUTPUT_LIMIT } = await import("../ckg/format.ts");
    // Text is clipped like the tool's; JSON carries every body.
    const page = pageOf(opts);
    const result = await graph.search(COMMAND_OF[kind], identifier, target, {
      body: opts.body,
      bodyBudget: opts.json ? undefined : OUTPUT_LIMIT,
      bodyFrom: page.offset,
    });
    if (opts.json) console.log(JSON.stringify(searchJson(result, root, page), null, 2));
    else console.log(formatSearchText(result, opts.body, page).trimEnd());
    return shows(result.matches.length, page) ? 0 : 1;
  } catch (e) {
    console.error(`deft ckg search-${kind}: ${errorMessage(e)}`);
    return 1;
  } finally {
    graph?.close();
  }
}

/**
 * `deft ckg search-references|search-callers|search-subclasses NAME`: an edge search, printed as
 * the tool prints it, or JSON with `json`, paged as `ckgSearch` pages. Returns 0 when the page
 * shows something, 1 otherwise.
 */
export async function ckgEdgeSearch(
  name: "search-references" | "search-callers" | "search-subclasses",
  identifier: string,
  opts: SearchFlags & { indirect?: boolean },
): Promise<number> {
  let graph: CodeGraph | undefined;
  try {
    const wanted = identifier.trim();
    if (wanted === "") throw new Error("the name to search for is empty.");
    const { root, target } = await resolveDirs(opts.workspace, opts.path);
    graph = await openGraph(root);
    const { formatEdgeText, edgeJson } = await import("../ckg/edge_format.ts");
    const { OUTPUT_LIMIT } = await import("../ckg/format.ts");
    const command = name.replace(/-/g, "_") as
      | "search_references"
      | "search_callers"
      | "search_subclasses";
    const page = pageOf(opts);
    const result = await graph.searchEdges(command, wanted, target, {
      body: opts.body,
      bodyBudget: opts.json ? undefined : OUTPUT_LIMIT,
      bodyFrom: page.offset,
      indirect: opts.indirect === true,
    });
    if (opts.json) console.log(JSON.stringify(edgeJson(result, page), null, 2));
    else console.log(formatEdgeText(result, opts.body, page).trimEnd());
    const found = result.references.length + result.callers.length + result.subclasses.length;
    return shows(found, page) ? 0 : 1;
  } catch (e) {
    console.error(`deft ckg ${name}: ${errorMessage(e)}`);
    return 1;
  } finally {
    graph?.close();
  }
}

/** The flags of the search commands (`body` names what `--no-body` leaves out the source of). */
export function searchOptionSpecs(body: string): OptionSpec[] {
  return [
    option("--path <dir>", "the codebase to search (default: the workspace)"),
    option("--no-body", `leave out the source of each ${body}`),
    option("--offset <n>", "skip the first N entries of the answer (default 0)", {
      integer: "non-negative",
    }),
    option("--limit <n>", "show at most N entries", { integer: "positive" }),
    option("--json", "print matches as JSON"),
    WORKING_DIR,
  ];
}

/** `--indirect`, which `search-subclasses` adds. */
export const INDIRECT = option(
  "--indirect",
  "also classes deriving from subclasses, at any depth",
);

/** The definition searches: command → kind. */
export const DEFINITION_SEARCHES = {
  "search-function": "function",
  "search-class": "class",
  "search-class-method": "class-method",
} as const;

/** The edge searches: command → description. */
export const EDGE_SEARCHES = {
  "search-references": "where NAME is used: calls, attribute accesses, imports, base classes",
  "search-callers": "the functions whose bodies call NAME",
  "search-subclasses": "the classes deriving from NAME",
} as const;

/**
 * `deft ckg search-* NAME [flags]` without commander, whose load costs more than a search that
 * finds nothing (`main.ts` tries this first). The same flags as commander's (from
 * `searchOptionSpecs`), parsed with node:util's parseArgs. Returns undefined for any command line
 * it does not fully understand (help, an unknown or malformed flag, a bad number, a missing or
 * extra argument), and commander takes over to print help or a proper usage error.
 */
export async function ckgFastPath(args: readonly string[]): Promise<number | undefined> {
  const [command, ...rest] = args;
  const kind = Object.hasOwn(DEFINITION_SEARCHES, command)
    ? DEFINITION_SEARCHES[command as keyof typeof DEFINITION_SEARCHES]
    : undefined;
  const isEdge = Object.hasOwn(EDGE_SEARCHES, command);
  if (kind === undefined && !isEdge) return undefined;
  const specs = [
    ...searchOptionSpecs(""),
    ...(command === "search-subclasses" ? [INDIRECT] : []),
  ];
  const config: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const spec of specs) {
    config[spec.long] = { type: spec.value ? "string" : "boolean" };
    if (spec.short) config[spec.long].short = spec.short;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options: config, allowPositionals: true, strict: true });
  } catch (e) {
    if (String((e as { code?: string }).code).startsWith("ERR_PARSE_ARGS")) return undefined;
    throw e;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return undefined;
  const number = (key: "offset" | "limit", least: number): number | undefined | null => {
    const value = values[key];
    if (value === undefined) return undefined;
    const n = Number(value);
    return typeof value === "string" && Number.isInteger(n) && n >= least ? n : null;
  };
  const offset = number("offset", 0);
  const limit = number("limit", 1);
  // A bad number: commander says what is wrong with it.
  if (offset === null || limit === null) return undefined;
  // The graph's modules load while the workspace is checked (the search imports them again).
  const loading: Promise<unknown>[] = [import("../ckg/graph.ts"), import("../ckg/format.ts")];
  if (isEdge) loading.push(import("../ckg/edge_format.ts"));
  for (const load of loading) load.catch(() => {});
  let workspace: string;
  try {
    // Not context.ts, which re-exports it: that one loads the tool catalog and the tool host
    // (and with them the sandbox's policy modules), none of which a search uses.
    const { workspaceOf } = await import("./workspace_arg.ts");
    workspace = await workspaceOf(values["working-dir"] as string | undefined);
  } catch (e) {
    // Deft's own code failing to load (a bundle that cannot read itself) says more than a
    // workspace it may not read: that error first.
    await Promise.all(loading);
    throw e;
  }
  // Loaded by now, or Deft's own code cannot load: that error before any about the search.
  await Promise.all(loading);
  const flags: SearchFlags & { indirect?: boolean } = {
    workspace,
    path: values.path as string | undefined,
    body: values["no-body"] !== true,
    json: values.json === true,
    offset,
    limit,
    indirect: values.indirect === true,
  };
  const name = positionals[0];
  return kind !== undefined
    ? await ckgSearch(kind, name, flags)
    : await ckgEdgeSearch(command as keyof typeof EDGE_SEARCHES, name, flags);
}
