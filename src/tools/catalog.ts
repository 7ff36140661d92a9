/**
 * The catalog: one entry per built-in tool, the only place that lists them. An entry holds the
 * model-facing definition, the loader of the implementation, where the tool runs and what a call
 * does (`effects`: reads, edits a file, runs a command), how a call is shown (`describe`: its
 * title, kind, files, command line or diff source), whether its edits can be undone, whether
 * a call ends the run and whether the tool keeps a shell running between calls. Nothing else names a tool or reads its argument names: the factory
 * (registry.ts), the tool hosts and their deadlines, the approval gate and its preview, the
 * consoles, ACP, the report, `/undo` and the agent loop ask these entries.
 *
 * Adding a tool means writing its module, adding one entry here and its loader in loaders.ts
 * (the one table a tool host needs, so that a host's start loads no definition). A small module
 * holds the definition and the class together (task_done.ts); a tool whose implementation imports much
 * gets a folder whose `definition.ts` holds the definition alone (edit/), because the catalog
 * imports every definition: listing tools, validating calls and rendering schemas need nothing
 * else, so the pipeline commands start fast. An implementation loads where the tool runs, on
 * its first call (see in_process.ts).
 */
import { type CallEffect, normalizeToolName } from "./base.ts";
import {
  BASH,
  BASH_OUTPUT,
  bashEffects,
  bashTimeout,
  KILL_SHELL,
  LIST_SHELLS,
  STARTED_AFTER,
} from "./bash/definition.ts";
import type { CatalogEntry, ToolDefinitionSource } from "./catalog_types.ts";
import { loaderOf } from "./loaders.ts";
import { CKG } from "./ckg/definition.ts";
import {
  type CallDescription,
  describeBash,
  describeCkg,
  describeEdit,
  describeJsonEdit,
  describeOther,
  describeTask,
  describeTaskDone,
  describeThinking,
  describeWebFetch,
  oneLine,
  TITLE_CHARS,
} from "./describe.ts";
import { EDIT, editEffects, editRewrite, editUndo } from "./edit/definition.ts";
import { JSON_EDIT, jsonEditEffects } from "./json_edit/definition.ts";
import { SEQUENTIAL_THINKING } from "./sequential_thinking.ts";
import { TASK_DONE } from "./task_done.ts";
import { WEB_FETCH } from "./web_fetch/definition.ts";
import { TASK } from "./task_tool.ts";

export type { CatalogEntry, ToolPlacement } from "./catalog_types.ts";
export type { AskedChange, CallDescription, CallDiff, CallKind, CallLocation } from "./describe.ts";

const READS: CallEffect = { kind: "read" };

/** The file editors' default deadline: they open and read files, nothing that takes long. */
export const FILE_TOOL_DEADLINE_SECONDS = 30;

/** Every built-in tool, in registration order. */
export const CATALOG: readonly CatalogEntry[] = [
  {
    definition: BASH,
    runs: "confines-itself",
    effects: bashEffects,
    describe: describeBash,
    holdsShell: true,
    ownTimeout: bashTimeout,
    load: loaderOf(BASH.name),
  },
  // The background shells' two handles: beside bash wherever it runs, since they act on the
  // shells its instance started (placed with it, as `confines-itself`, in every sandbox mode).
  {
    definition: BASH_OUTPUT,
    runs: "confines-itself",
    effects: () => READS,
    describe: (args) => describeOther("bash_output", args, READS),
    statusCall: { shell_id: LIST_SHELLS },
    load: loaderOf(BASH_OUTPUT.name),
  },
  {
    definition: KILL_SHELL,
    runs: "confines-itself",
    // It ends processes the model started; nothing in the workspace changes.
    effects: () => ({ kind: "other" }),
    describe: (args) => describeOther("kill_shell", args, { kind: "other" }),
    takeBackCall: (since) => ({ shell_id: LIST_SHELLS, [STARTED_AFTER]: since }),
    load: loaderOf(KILL_SHELL.name),
  },
  {
    definition: EDIT,
    runs: "tool-host",
    effects: editEffects,
    describe: describeEdit,
    undo: editUndo,
    rewrite: editRewrite,
    deadline: FILE_TOOL_DEADLINE_SECONDS,
    load: loaderOf(EDIT.name),
  },
  {
    definition: JSON_EDIT,
    runs: "tool-host",
    effects: jsonEditEffects,
    describe: describeJsonEdit,
    deadline: FILE_TOOL_DEADLINE_SECONDS,
    load: loaderOf(JSON_EDIT.name),
  },
  {
    definition: SEQUENTIAL_THINKING,
    runs: "in-process",
    effects: () => READS,
    describe: describeThinking,
    load: loaderOf(SEQUENTIAL_THINKING.name),
  },
  {
    definition: TASK_DONE,
    runs: "in-process",
    effects: () => READS,
    describe: describeTaskDone,
    endsRun: true,
    load: loaderOf(TASK_DONE.name),
  },
  {
    definition: CKG,
    // The one tool that writes Deft's cache: away from the editors (see ToolPlacement).
    runs: "cache-host",
    effects: () => READS,
    describe: describeCkg,
    load: loaderOf(CKG.name),
  },
  {
    definition: WEB_FETCH,
    // Deft's own process, the one with network: asked about in `commands` mode unless a
    // `fetch HOST` rule allows the URL's host.
    runs: "in-process",
    effects: fetchEffects,
    describe: describeWebFetch,
    load: loaderOf(WEB_FETCH.name),
  },
  {
    definition: TASK,
    // A stand-in here: the session puts the child agent runner (src/agent/subagent.ts) in its
    // place. The child's own calls each pass the gates; the parent's tree is not written.
    runs: "in-process",
    needsSession: true,
    effects: () => ({ kind: "other" }),
    describe: describeTask,
    load: loaderOf(TASK.name),
  },
];

/** A web_fetch call's effect: the host its URL names ("" when it names none). */
function fetchEffects(args: Record<string, unknown>): CallEffect {
  let host = "";
  try {
    if (typeof args.url === "string") host = new URL(args.url).hostname.toLowerCase();
  } catch {
    // Not a URL: no rule matches it, so it is asked about.
  }
  return { kind: "fetch", host };
}

// The names alone, kept light for what checks a configured name before any tool loads.
export { DEFAULT_TOOL_NAMES } from "./names.ts";

/** Raised when a configured tool name matches no registered tool. */
export class UnknownToolError extends Error {
  constructor(readonly toolName: string) {
    super(
      `Unknown tool '${toolName}'. Valid tool names: ${registeredToolNames().join(", ")}.`,
    );
    this.name = "UnknownToolError";
  }
}

/** Every registered tool name, in registration order. */
export function registeredToolNames(): string[] {
  return CATALOG.map((t) => t.definition.name);
}

/**
 * The tools a front end with no agent session offers (`deft serve`, `deft mcp`): every registered
 * tool but those that work only inside a session (the Task stand-in).
 */
export function servedToolNames(): string[] {
  return CATALOG.filter((t) => !t.needsSession).map((t) => t.definition.name);
}

/** The registered name that `name` refers to (case and underscores ignored), if any. */
export function resolveToolName(name: string): string | undefined {
  const wanted = normalizeToolName(name);
  return registeredToolNames().find((n) => normalizeToolName(n) === wanted);
}

/** The registered names for `names`, without duplicates. Throws `UnknownToolError`. */
export function resolveToolNames(names: readonly string[]): string[] {
  return [
    ...new Set(names.map((name) => {
      const found = resolveToolName(name);
      if (!found) throw new UnknownToolError(name);
      return found;
    })),
  ];
}

/** The catalog entry of a registered tool (its exact name). */
export function entryOf(name: string): CatalogEntry {
  const entry = CATALOG.find((t) => t.definition.name === name);
  if (!entry) throw new UnknownToolError(name);
  return entry;
}

/** The definition of a registered tool (its exact name). */
export function definitionOf(name: string): ToolDefinitionSource {
  return entryOf(name).definition;
}

/** The catalog entry of the tool `name` refers to (case and underscores ignored), if any. */
export function catalogEntry(name: string): CatalogEntry | undefined {
  const found = resolveToolName(name);
  return found === undefined ? undefined : entryOf(found);
}

/**
 * What a call of the tool `name` (case and underscores ignored) with `args` does, by its catalog
 * entry; undefined for a tool outside the catalog or an entry that does not say.
 */
export function effectsOf(name: string, args: Record<string, unknown>): CallEffect | undefined {
  return catalogEntry(name)?.effects?.(args);
}

/** A name that is not a string, as text (one whose `toString` is broken as its type). */
function nameOf(name: unknown): string {
  try {
    return String(name);
  } catch {
    return typeof name;
  }
}

/**
 * How a call of the tool `name` with `args` is shown (see describe.ts): by the tool's catalog
 * entry; for a tool outside the catalog (an MCP server's) or arguments that are not an object,
 * the call as made and `effect`, what the tool says the call does. Never throws, whatever the
 * name and arguments (a trajectory read from disk may hold anything).
 *
 * @example
 * ```ts
 * describeCall("bash", { command: "make test" }).title; // "$ make test"
 * ```
 */
export function describeCall(name: unknown, args: unknown, effect?: CallEffect): CallDescription {
  const shown = oneLine(typeof name === "string" ? name : nameOf(name), TITLE_CHARS);
  const entry = typeof name === "string" ? catalogEntry(name) : undefined;
  const record = args !== null && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : undefined;
  try {
    if (entry && record) return entry.describe(record);
  } catch {
    // A description that throws on odd arguments: the call as made instead.
  }
  try {
    return describeOther(shown, args, effect);
  } catch {
    return { title: shown, subject: "", kind: "other", locations: [] };
  }
}
