/**
 * The one factory of built-in tools. Every command that runs tools (`run`, `interactive`, `tool`,
 * `serve`, `mcp`) builds them here, through `createHostedTools` (host/remote.ts), which only
 * supplies the tool hosts; `deft tools`, which calls none, builds them here without hosts. Each
 * tool is a stand-in for its catalog entry; where its calls go follows the entry's placement and
 * the sandbox setting (`placeOf`). Nothing here loads an implementation: a tool's module loads
 * where it runs, on its first call.
 */
import type { Tool, ToolContext, ToolSettings } from "./base.ts";
import { DEFAULT_TOOL_NAMES, definitionOf, entryOf, resolveToolNames } from "./catalog.ts";
import { InProcessHost } from "./in_process.ts";
import { type Host, StandInTool } from "./stand_in.ts";

export {
  DEFAULT_TOOL_NAMES,
  registeredToolNames,
  resolveToolName,
  UnknownToolError,
} from "./catalog.ts";

/**
 * Where a tool's calls are answered: this process, the permission-fenced worker, or the worker
 * inside bubblewrap (the sandboxed host).
 */
export type Place = "process" | "worker" | "sandboxed";

/** Makes the host for the tools placed in the worker or in the sandboxed host. */
export type HostMaker = (place: Exclude<Place, "process">, names: string[]) => Host;

/**
 * Where the registered tool `name` runs under `settings`. With a sandbox, the tools that do not
 * confine themselves move into the sandboxed host; bash goes on starting its own bubblewrap from
 * the worker.
 */
export function placeOf(name: string, settings: ToolSettings): Place {
  const { runs } = entryOf(name);
  if (runs === "in-process") return "process";
  if (runs === "confines-itself" || (settings.sandbox ?? "none") === "none") return "worker";
  return "sandboxed";
}

/**
 * Builds the named tools (default: `DEFAULT_TOOL_NAMES`), in the order named, without duplicates.
 * With `hosts`, each tool runs where `placeOf` says and the hosts come from `hosts`, one per
 * place; without, every tool runs in this process (tests, `DEFT_TOOLS_IN_PROCESS=1`). Throws
 * `UnknownToolError`.
 */
export function createTools(
  context: ToolContext,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
  hosts?: HostMaker,
): Tool[] {
  const resolved = resolveToolNames(names);
  const place = (name: string): Place => hosts ? placeOf(name, context.settings) : "process";
  const groups = Map.groupBy(resolved, place);
  const byPlace = new Map<Place, Host>();
  for (const [where, group] of groups) {
    byPlace.set(
      where,
      where === "process" ? new InProcessHost(context, group) : hosts!(where, group),
    );
  }
  return resolved.map((name) =>
    new StandInTool(definitionOf(name), context, byPlace.get(place(name))!)
  );
}
