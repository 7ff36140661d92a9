/**
 * The tool registry: every built-in tool by name. Adding a tool means writing its module and one
 * line here.
 */
import type { Tool, ToolContext } from "./base.ts";
import { BashTool } from "./bash/tool.ts";
import { CkgTool } from "./ckg/tool.ts";
import { EditTool } from "./edit/tool.ts";
import { JsonEditTool } from "./json_edit/tool.ts";
import { SequentialThinkingTool } from "./sequential_thinking.ts";
import { TaskDoneTool } from "./task_done.ts";
import { normalizeToolName } from "./executor.ts";

/** Builds one tool for a context. */
export type ToolFactory = (context: ToolContext) => Tool;

const FACTORIES: Readonly<Record<string, ToolFactory>> = {
  bash: (c) => new BashTool(c),
  str_replace_based_edit_tool: (c) => new EditTool(c),
  json_edit_tool: (c) => new JsonEditTool(c),
  sequentialthinking: (c) => new SequentialThinkingTool(c),
  task_done: (c) => new TaskDoneTool(c),
  ckg: (c) => new CkgTool(c),
};

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
  return Object.keys(FACTORIES);
}

/** The registered name that `name` refers to (case and underscores ignored), if any. */
export function resolveToolName(name: string): string | undefined {
  const wanted = normalizeToolName(name);
  return registeredToolNames().find((n) => normalizeToolName(n) === wanted);
}

/** Builds the named tools (default: `DEFAULT_TOOL_NAMES`). Throws `UnknownToolError`. */
export function createTools(
  context: ToolContext,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
): Tool[] {
  const resolved = names.map((name) => {
    const found = resolveToolName(name);
    if (!found) throw new UnknownToolError(name);
    return found;
  });
  return [...new Set(resolved)].map((name) => FACTORIES[name](context));
}
