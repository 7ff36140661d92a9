/**
 * The tool registry: builds every built-in tool by name. Adding a tool means writing its module
 * (a definition and an implementation), one line here and one in catalog.ts.
 *
 * Tools that touch the system load their implementation on their first call: the tool worker
 * builds every confined tool at start and a call often uses one, so it need not wait for the
 * others' modules (bash, the editor and the JSON editor cost a one-shot `deft tool ckg` ~15 ms).
 */
import type { Tool, ToolContext, ToolExecResult } from "./base.ts";
import { StandInTool } from "./stand_in.ts";
import { SequentialThinkingTool } from "./sequential_thinking.ts";
import { TaskDoneTool } from "./task_done.ts";
import { DEFAULT_TOOL_NAMES, definitionOf, resolveToolNames } from "./catalog.ts";
import type { ToolDefinitionSource } from "./catalog_types.ts";

export {
  DEFAULT_TOOL_NAMES,
  registeredToolNames,
  resolveToolName,
  UnknownToolError,
} from "./catalog.ts";

/** Builds one tool for a context. */
export type ToolFactory = (context: ToolContext) => Tool;

/** Builds a tool after loading its module. */
type ToolLoader = (context: ToolContext) => Promise<Tool>;

/** The tools that touch the system, each loaded on its first call. */
const LOADERS: Readonly<Record<string, ToolLoader>> = {
  bash: async (c) => new (await import("./bash/tool.ts")).BashTool(c),
  str_replace_based_edit_tool: async (c) => new (await import("./edit/tool.ts")).EditTool(c),
  json_edit_tool: async (c) => new (await import("./json_edit/tool.ts")).JsonEditTool(c),
  ckg: async (c) => new (await import("./ckg/tool.ts")).CkgTool(c),
};

const FACTORIES: Readonly<Record<string, ToolFactory>> = {
  ...Object.fromEntries(Object.entries(LOADERS).map(([name, load]) => [name, lazily(name, load)])),
  sequentialthinking: (c) => new SequentialThinkingTool(c),
  task_done: (c) => new TaskDoneTool(c),
};

function lazily(name: string, load: ToolLoader): ToolFactory {
  return (context) => new LazyTool(definitionOf(name), context, load);
}

/** A stand-in whose implementation is built on the first call, then serves every call and close. */
class LazyTool extends StandInTool {
  #tool: Promise<Tool> | undefined;

  constructor(
    definition: ToolDefinitionSource,
    context: ToolContext,
    private readonly load: ToolLoader,
  ) {
    super(definition, context);
  }

  #built(): Promise<Tool> {
    if (!this.#tool) {
      const built = this.load(this.context);
      // A module that failed to load is tried again on the next call.
      built.catch(() => {
        if (this.#tool === built) this.#tool = undefined;
      });
      this.#tool = built;
    }
    return this.#tool;
  }

  async execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return await (await this.#built()).execute(args);
  }

  override async close(): Promise<void> {
    // A tool never called holds nothing.
    const tool = await this.#tool?.catch(() => undefined);
    await tool?.close();
  }
}

/** Builds the named tools (default: `DEFAULT_TOOL_NAMES`). Throws `UnknownToolError`. */
export function createTools(
  context: ToolContext,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
): Tool[] {
  return resolveToolNames(names).map((name) => FACTORIES[name](context));
}
