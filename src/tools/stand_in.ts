/**
 * The one kind of tool the executor holds for a built-in tool: a stand-in with the catalog's
 * name, description and parameters, whose calls a host answers. The host is this process
 * (in_process.ts, which loads the implementation on the first call) or a tool host's worker
 * (host/tool_host.ts). The model and the executor cannot tell a stand-in from the tool itself; what
 * a call does (`effects`) the stand-in answers from the catalog entry, without the host.
 */
import {
  type CallEffect,
  type CallPlan,
  Tool,
  type ToolContext,
  type ToolExecResult,
  type ToolParameter,
} from "./base.ts";
import type { CatalogEntry } from "./catalog_types.ts";

/** Where a tool's implementation lives and answers its calls. */
export interface Host {
  /**
   * Runs one call of the tool `name` with arguments the executor has already validated, as
   * `plan` says (how the approval gate let it through), which travels beside the arguments.
   */
  call(name: string, args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult>;
  /** Releases what the tool `name` holds; its next call finds it fresh. */
  close(name: string): Promise<void>;
}

/** What a stand-in needs of a catalog entry: the definition and what a call does. */
export type StandInEntry = Pick<CatalogEntry, "definition" | "effects">;

/** A built-in tool as the executor sees it: its definition, with calls handed to `host`. */
export class StandInTool<H extends Host = Host> extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
  readonly #effects: StandInEntry["effects"];

  constructor(entry: StandInEntry, context: ToolContext, readonly host: H) {
    super(context);
    this.name = entry.definition.name;
    this.description = entry.definition.description;
    this.parameters = entry.definition.parameters;
    this.#effects = entry.effects;
  }

  execute(args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    return this.host.call(this.name, args, plan);
  }

  override effects(args: Record<string, unknown>): CallEffect | undefined {
    return this.#effects?.(args);
  }

  override close(): Promise<void> {
    return this.host.close(this.name);
  }
}
