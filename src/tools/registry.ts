/**
 * The tool registry: builds every built-in tool by name. Adding a tool means writing its module
 * (a definition and an implementation), one line here and one in catalog.ts.
 */
import type { Tool, ToolContext } from "./base.ts";
import { BashTool } from "./bash/tool.ts";
import { CkgTool } from "./ckg/tool.ts";
import { EditTool } from "./edit/tool.ts";
import { JsonEditTool } from "./json_edit/tool.ts";
import { SequentialThinkingTool } from "./sequential_thinking.ts";
import { TaskDoneTool } from "./task_done.ts";
import { DEFAULT_TOOL_NAMES, resolveToolNames } from "./catalog.ts";

export {
  DEFAULT_TOOL_NAMES,
  registeredToolNames,
  resolveToolName,
  UnknownToolError,
} from "./catalog.ts";

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

/** Builds the named tools (default: `DEFAULT_TOOL_NAMES`). Throws `UnknownToolError`. */
export function createTools(
  context: ToolContext,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
): Tool[] {
  return resolveToolNames(names).map((name) => FACTORIES[name](context));
}
