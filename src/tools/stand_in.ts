/**
 * A tool that stands in for its implementation: the catalog's name, description and parameters,
 * with `execute` and `close` handed on to where the work really happens (a tool host, a module
 * loaded on first use). The model and the executor cannot tell it from the tool itself.
 */
import { Tool, type ToolContext, type ToolParameter } from "./base.ts";
import type { ToolDefinitionSource } from "./catalog_types.ts";

/** The definition half of a tool, taken from its catalog entry. */
export abstract class StandInTool extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
  override readonly touchesSystem: boolean;

  constructor(definition: ToolDefinitionSource, context: ToolContext) {
    super(context);
    this.name = definition.name;
    this.description = definition.description;
    this.parameters = definition.parameters;
    this.touchesSystem = definition.touchesSystem;
  }
}
