/** `ckg`: look up functions, classes and methods in the code knowledge graph. */
import { fail, Tool, type ToolExecResult, type ToolParameter } from "../base.ts";

/** The code knowledge graph tool (opt-in). */
export class CkgTool extends Tool {
  readonly name = "ckg";
  readonly description = [
    "Find where functions, classes and class methods are defined, by exact name, in a codebase " +
    "(Python, Java, C, C++, JavaScript, TypeScript, Go, Rust).",
    "* `search_function`: free functions (and nested ones); `search_class`: classes, structs, " +
    "interfaces, enums, traits; `search_class_method`: methods of classes.",
    "* Results give file, line range and, unless `print_body` is false, the body.",
    "* The graph follows edits automatically; when nothing matches, close names are suggested.",
  ].join("\n");
  readonly parameters: readonly ToolParameter[] = [
    {
      name: "command",
      type: "string",
      description: "What to search for.",
      enum: ["search_function", "search_class", "search_class_method"],
      required: true,
    },
    {
      name: "path",
      type: "string",
      description: "Absolute path of the codebase directory to search.",
      required: true,
    },
    {
      name: "identifier",
      type: "string",
      description: "The exact name of the function, class or method.",
      required: true,
    },
    {
      name: "print_body",
      type: "boolean",
      description: "Include each match's source (default true).",
    },
  ];

  execute(_args: Record<string, unknown>): Promise<ToolExecResult> {
    return Promise.resolve(fail("The ckg tool is not implemented yet."));
  }
}
