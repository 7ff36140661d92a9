/**
 * The built-in tools' names alone, in the catalog's order, for what must check a configured name
 * without loading any tool's definition: the interactive start validates `agents.*.tools` before
 * its prompt is drawn (src/cli/interactive/preflight.ts). catalog.ts stays the one place that
 * describes a tool; tests/unit/tools/names_test.ts holds this list equal to its entries.
 */

/** Every registered tool name, in registration order (catalog.ts's `registeredToolNames()`). */
export const TOOL_NAMES: readonly string[] = [
  "bash",
  "bash_output",
  "kill_shell",
  "str_replace_based_edit_tool",
  "json_edit_tool",
  "sequentialthinking",
  "task_done",
  "ckg",
  "web_fetch",
  "Task",
];

/** The tools an agent gets when its configuration names none (ckg is opt-in). */
export const DEFAULT_TOOL_NAMES: readonly string[] = [
  "bash",
  "bash_output",
  "kill_shell",
  "str_replace_based_edit_tool",
  "json_edit_tool",
  "sequentialthinking",
  "task_done",
];

/**
 * The first of `names` that names no built-in tool (case and underscores ignored, as
 * catalog.ts's `resolveToolName`), with the message the tool factory gives for it; undefined
 * when every name is known.
 */
export function unknownToolName(names: readonly string[]): string | undefined {
  const normal = (name: string) => name.toLowerCase().replaceAll("_", "");
  const known = new Set(TOOL_NAMES.map(normal));
  const unknown = names.find((name) => !known.has(normal(name)));
  return unknown === undefined
    ? undefined
    : `Unknown tool '${unknown}'. Valid tool names: ${TOOL_NAMES.join(", ")}.`;
}
