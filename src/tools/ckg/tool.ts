/**
 * `ckg`: look up functions, classes and methods in the code knowledge graph.
 *
 * This module stays light because the registry imports it at start-up: tree-sitter, SQLite and
 * the graph load on the first call.
 */
import { CKG } from "./definition.ts";
import { isAbsolute, resolve } from "node:path";
import { fail, ok, Tool, type ToolExecResult } from "../base.ts";
import { confine } from "../../policy/workspace.ts";
import type { CodeGraph } from "../../ckg/graph.ts";
import type { SearchCommand } from "../../ckg/search.ts";
import type { EdgeCommand } from "../../ckg/edge_search.ts";
import type { Page } from "../../ckg/format.ts";

const COMMANDS: readonly string[] = ["search_function", "search_class", "search_class_method"];
const EDGE_COMMANDS: readonly string[] = [
  "search_references",
  "search_callers",
  "search_subclasses",
];

/** The page `offset`/`limit` ask for, or what is wrong with them. */
function pageOf(args: Record<string, unknown>): Page | string {
  const count = (key: string, least: number): number | undefined | string => {
    const value = args[key];
    if (value === undefined || value === null) return undefined;
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isInteger(n) || n < least) {
      return `\`${key}\` must be a whole number of at least ${least} (got ${
        JSON.stringify(value)
      }): ${key === "offset" ? "the number of entries to skip" : "the most entries to show"}.`;
    }
    return n;
  };
  const offset = count("offset", 0);
  if (typeof offset === "string") return offset;
  const limit = count("limit", 1);
  if (typeof limit === "string") return limit;
  return { offset: offset ?? 0, limit };
}

/** The code knowledge graph tool (opt-in). */
export class CkgTool extends Tool {
  readonly name = CKG.name;
  readonly description = CKG.description;
  readonly parameters = CKG.parameters;

  #graph: Promise<CodeGraph> | undefined;

  async execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    const command = String(args.command);
    const isEdge = EDGE_COMMANDS.includes(command);
    if (!COMMANDS.includes(command) && !isEdge) return fail(`Invalid command: ${command}`);
    const identifier = String(args.identifier ?? "").trim();
    if (identifier === "") return fail(`No identifier provided for the ${this.name} tool`);
    const path = String(args.path ?? "");
    if (path.trim() === "") return fail(`No path provided for the ${this.name} tool`);
    const printBody = args.print_body !== false;
    const page = pageOf(args);
    if (typeof page === "string") return fail(page);

    // The graph's code loads while the path is checked.
    void this.#loadGraphModule();
    const { workspace } = this.context;
    // A relative path is taken from the workspace root rather than refused: it can only mean that.
    const wanted = isAbsolute(path) ? path : resolve(workspace, path);
    let dir: string;
    try {
      dir = await confine(workspace, wanted);
    } catch (e) {
      // Outside the workspace, a symlink loop, an unreadable folder on the way: all about the path.
      return fail(e instanceof Error ? e.message : String(e));
    }
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(dir);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return fail(`Codebase path ${path} does not exist`);
      throw e;
    }
    if (!info.isDirectory) return fail(`Codebase path ${path} is not a directory`);

    if (isEdge) return await this.#edges(command as EdgeCommand, identifier, dir, args, page);
    const [graph, { formatSearchText, OUTPUT_LIMIT }] = await Promise.all([
      this.#openGraph(),
      import("../../ckg/format.ts"),
    ]);
    const result = await graph.search(command as SearchCommand, identifier, dir, {
      body: printBody,
      bodyBudget: OUTPUT_LIMIT,
      bodyFrom: page.offset,
    });
    return ok(formatSearchText(result, printBody, page));
  }

  async #edges(
    command: EdgeCommand,
    identifier: string,
    dir: string,
    args: Record<string, unknown>,
    page: Page,
  ): Promise<ToolExecResult> {
    const printBody = args.print_body !== false;
    const [graph, { formatEdgeText }, { OUTPUT_LIMIT }] = await Promise.all([
      this.#openGraph(),
      import("../../ckg/edge_format.ts"),
      import("../../ckg/format.ts"),
    ]);
    const result = await graph.searchEdges(command, identifier, dir, {
      body: printBody,
      bodyBudget: OUTPUT_LIMIT,
      bodyFrom: page.offset,
      indirect: args.indirect === true,
    });
    return ok(formatEdgeText(result, printBody, page));
  }

  #loadGraphModule(): Promise<typeof import("../../ckg/graph.ts")> {
    const loading = import("../../ckg/graph.ts");
    // A failed load is met again, and reported, where the graph is opened.
    loading.catch(() => {});
    return loading;
  }

  #openGraph(): Promise<CodeGraph> {
    this.#graph ??= (async () => {
      const { CodeGraph } = await this.#loadGraphModule();
      return CodeGraph.open(this.context.workspace, {
        ckgDir: this.context.settings.ckgDir,
        watch: true,
        // A session indexes the rest while the model thinks; a one-call process would not live
        // to use it, and would only delay its own exit.
        background: !this.context.settings.singleCall,
      });
    })();
    this.#graph.catch(() => this.#graph = undefined);
    return this.#graph;
  }

  override async close(): Promise<void> {
    const graph = this.#graph;
    this.#graph = undefined;
    if (graph) (await graph.catch(() => undefined))?.close();
  }
}
