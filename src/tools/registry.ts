/**
 * The one factory of built-in tools, `createTools`: every tool Deft builds is made here, as a
 * stand-in for its catalog entry, and where its calls go follows the entry's placement and the
 * sandbox setting (`placeOf`, the one decision of placement). The commands that run tools (`run`,
 * `interactive`, `tool`, `serve`, `mcp`) call it through `createHostedTools` (host/mod.ts), a thin
 * layer that only hands it a host per place; `deft tools`, which calls none, calls it without
 * hosts. Nothing here loads an implementation: a tool's module loads where it runs, on its first
 * call.
 */
import type { Tool, ToolContext, ToolSettings } from "./base.ts";
import { DEFAULT_TOOL_NAMES, entryOf, resolveToolNames } from "./catalog.ts";
import { InProcessHost } from "./in_process.ts";
import { type Host, StandInTool } from "./stand_in.ts";

export {
  DEFAULT_TOOL_NAMES,
  registeredToolNames,
  resolveToolName,
  servedToolNames,
  UnknownToolError,
} from "./catalog.ts";

/**
 * Where a tool's calls are answered: this process, the permission-fenced worker, or the worker
 * inside bubblewrap: `sandboxed` (the editors' host: writes the workspace and its private temp
 * folder only) or `sandboxed-cache` (the code graph's host: writes its folder in Deft's cache,
 * reads the workspace).
 */
export type Place = "process" | "worker" | "sandboxed" | "sandboxed-cache";

/** The places that are a bubblewrap'd `deft __tool-host`. */
export type SandboxedPlace = Extract<Place, "sandboxed" | "sandboxed-cache">;

/** Makes the host for the tools placed in the worker or in the sandboxed host. */
export type HostMaker = (place: Exclude<Place, "process">, names: string[]) => Host;

/**
 * Where the registered tool `name` runs under `settings`: the one decision of placement. With a
 * sandbox, the tools that do not confine themselves move into a sandboxed host, the code graph
 * (which writes Deft's cache) into one of its own; bash goes on starting its own bubblewrap from
 * the worker. Without one, they share the worker: there the model's shell can write anywhere
 * the user can, so separate hosts would guard nothing (docs/sandbox.md says what `none` leaves).
 */
export function placeOf(name: string, settings: ToolSettings): Place {
  const { runs } = entryOf(name);
  if (runs === "in-process") return "process";
  if (runs === "confines-itself" || (settings.sandbox ?? "none") === "none") return "worker";
  return runs === "cache-host" ? "sandboxed-cache" : "sandboxed";
}

/** True for the places that are a sandboxed host. */
export function isSandboxed(place: Place): place is SandboxedPlace {
  return place === "sandboxed" || place === "sandboxed-cache";
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
  return resolved.map((name) => new StandInTool(entryOf(name), context, byPlace.get(place(name))!));
}
