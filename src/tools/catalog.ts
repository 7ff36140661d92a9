/**
 * The catalog: every built-in tool's name and model-facing definition, without loading any
 * implementation. Listing tools, validating calls and rendering schemas need only this, so the
 * pipeline commands start fast; the registry (registry.ts) builds the real tools.
 */
import { BASH } from "./bash/definition.ts";
import type { ToolDefinitionSource } from "./catalog_types.ts";
import { CKG } from "./ckg/definition.ts";
import { EDIT } from "./edit/definition.ts";
import { normalizeToolName } from "./executor.ts";
import { JSON_EDIT } from "./json_edit/definition.ts";
import { SEQUENTIAL_THINKING } from "./sequential_thinking.ts";
import { TASK_DONE } from "./task_done.ts";

/** Every built-in tool's definition, in registration order. */
export const CATALOG: readonly ToolDefinitionSource[] = [
  BASH,
  EDIT,
  JSON_EDIT,
  SEQUENTIAL_THINKING,
  TASK_DONE,
  CKG,
];

/** The tools an agent gets when its configuration names none (ckg is opt-in). */
export const DEFAULT_TOOL_NAMES: readonly string[] = [
  "bash",
  "str_replace_based_edit_tool",
  "json_edit_tool",
  "sequentialthinking",
  "task_done",
];

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
  return CATALOG.map((t) => t.name);
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

/** The definition of a registered tool. */
export function definitionOf(name: string): ToolDefinitionSource {
  return CATALOG.find((t) => t.name === name)!;
}
