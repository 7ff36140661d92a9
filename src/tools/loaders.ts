/**
 * Where each built-in tool's implementation is loaded from, by the tool's registered name: the
 * catalog's entries take their `load` from here, and a tool host, which only runs calls the main
 * thread has already validated, uses this table alone. So the sandboxed host's start loads no
 * definition, schema or description of any tool, and the first call loads only its own tool's
 * modules. Nothing here is imported statically.
 */
import type { ToolClass } from "./catalog_types.ts";

/** The loader of each built-in tool's implementation, by its registered name. */
export const TOOL_LOADERS: Readonly<Record<string, () => Promise<ToolClass>>> = {
  bash: async () => (await import("./bash/tool.ts")).BashTool,
  bash_output: async () => (await import("./bash/background_tools.ts")).BashOutputTool,
  kill_shell: async () => (await import("./bash/background_tools.ts")).KillShellTool,
  str_replace_based_edit_tool: async () => (await import("./edit/tool.ts")).EditTool,
  json_edit_tool: async () => (await import("./json_edit/tool.ts")).JsonEditTool,
  sequentialthinking: async () => (await import("./sequential_thinking.ts")).SequentialThinkingTool,
  task_done: async () => (await import("./task_done.ts")).TaskDoneTool,
  ckg: async () => (await import("./ckg/tool.ts")).CkgTool,
  web_fetch: async () => (await import("./web_fetch/tool.ts")).WebFetchTool,
  Task: async () => (await import("./task_tool.ts")).TaskStandInTool,
};

/** The loader of the tool registered as `name`; throws for a name with none. */
export function loaderOf(name: string): () => Promise<ToolClass> {
  const load = Object.hasOwn(TOOL_LOADERS, name) ? TOOL_LOADERS[name] : undefined;
  if (!load) throw new Error(`the tool '${name}' has no implementation to load`);
  return load;
}

/** Loads the implementation of the tool registered as `name`. */
export function loadTool(name: string): Promise<ToolClass> {
  try {
    return loaderOf(name)();
  } catch (e) {
    return Promise.reject(e);
  }
}
