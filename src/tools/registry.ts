/**
 * The tool registry: builds every built-in tool by name. Adding a tool means writing its module
 * (a definition and an implementation), one line here and one in catalog.ts.
 *
 * Tools that touch the system load their implementation on their first call: the tool worker
 * builds every confined tool at start and a call often uses one, so it need not wait for the
 * others' modules (bash, the editor and the JSON editor cost a one-shot `deft tool ckg` ~15 ms).
 */
import { Tool, type ToolContext, type ToolExecResult, type ToolParameter } from "./base.ts";
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

/** Loads the factory of a tool whose implementation loads on first use. */
type FactoryLoader = () => Promise<ToolFactory>;

const LOADERS: Readonly<Record<string, FactoryLoader>> = {
  bash: async () => {
    const { BashTool } = await import("./bash/tool.ts");
    return (c) => new BashTool(c);
  },
  str_replace_based_edit_tool: async () => {
    const { EditTool } = await import("./edit/tool.ts");
    return (c) => new EditTool(c);
  },
  json_edit_tool: async () => {
    const { JsonEditTool } = await import("./json_edit/tool.ts");
    return (c) => new JsonEditTool(c);
  },
  ckg: async () => {
    const { CkgTool } = await import("./ckg/tool.ts");
    return (c) => new CkgTool(c);
  },
};

const FACTORIES: Readonly<Record<string, ToolFactory>> = {
  bash: lazily("bash"),
  str_replace_based_edit_tool: lazily("str_replace_based_edit_tool"),
  json_edit_tool: lazily("json_edit_tool"),
  sequentialthinking: (c) => new SequentialThinkingTool(c),
  task_done: (c) => new TaskDoneTool(c),
  ckg: lazily("ckg"),
};

function lazily(name: string): ToolFactory {
  return (context) => new LazyTool(definitionOf(name), context, LOADERS[name]);
}

/**
 * A tool with its catalog definition whose implementation is built on the first call, then
 * serves every call and the close: a stand-in the model and the executor cannot tell apart.
 */
class LazyTool extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
  override readonly touchesSystem: boolean;
  #tool: Promise<Tool> | undefined;

  constructor(
    definition: ToolDefinitionSource,
    context: ToolContext,
    private readonly load: FactoryLoader,
  ) {
    super(context);
    this.name = definition.name;
    this.description = definition.description;
    this.parameters = definition.parameters;
    this.touchesSystem = definition.touchesSystem;
  }

  #built(): Promise<Tool> {
    if (!this.#tool) {
      const built = this.load().then((factory) => factory(this.context));
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
