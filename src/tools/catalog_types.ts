/** The model-facing half of a tool, declared apart from its implementation. */
import type { ToolParameter } from "./base.ts";

/** A tool's name, description and parameters, and whether it touches the system. */
export interface ToolDefinitionSource {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
  /** True for tools that read or write files or start processes (they run in the tool host). */
  readonly touchesSystem: boolean;
  /**
   * True for a tool that confines what it runs itself (bash starts each shell in bubblewrap):
   * it stays in the worker host when the other tools move into the sandboxed one.
   */
  readonly confinesItself?: boolean;
}
