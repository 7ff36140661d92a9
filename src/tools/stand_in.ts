/**
 * The one kind of tool the executor holds for a built-in tool: a stand-in with the catalog's
 * name, description and parameters, whose calls a host answers. The host is this process
 * (in_process.ts, which loads the implementation on the first call) or a tool host's worker
 * (host/tool_host.ts). The model and the executor cannot tell a stand-in from the tool itself.
 */
import { Tool, type ToolContext, type ToolExecResult, type ToolParameter } from "./base.ts";
import type { ToolDefinitionSource } from "./catalog_types.ts";

/** Where a tool's implementation lives and answers its calls. */
export interface Host {
  /** Runs one call of the tool `name` with arguments the executor has already validated. */
  call(name: string, args: Record<string, unknown>): Promise<ToolExecResult>;
  /** Releases what the tool `name` holds; its next call finds it fresh. */
  close(name: string): Promise<void>;
}

/** A built-in tool as the executor sees it: its definition, with calls handed to `host`. */
export class StandInTool<H extends Host = Host> extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];

  constructor(definition: ToolDefinitionSource, context: ToolContext, readonly host: H) {
    super(context);
    this.name = definition.name;
    this.description = definition.description;
    this.parameters = definition.parameters;
  }

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return this.host.call(this.name, args);
  }

  override close(): Promise<void> {
    return this.host.close(this.name);
  }
}
