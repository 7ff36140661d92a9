/** The `ckg` tool as the model sees it: name, description, parameters. */
import type { ToolDefinitionSource } from "../catalog_types.ts";

/** `ckg`'s model-facing definition (kept apart from the implementation, which loads lazily). */
export const CKG: ToolDefinitionSource = {
  name: "ckg",
  description: [
    "Find where functions, classes and class methods are defined, and where names are used, by " +
    "exact name, in a codebase (Python, Java, C, C++, JavaScript, TypeScript, Go, Rust).",
    "* `search_function`: free functions (and nested ones); `search_class`: classes, structs, " +
    "interfaces, enums, traits; `search_class_method`: methods of classes.",
    "* `search_references`: where the name is used (calls, attribute accesses, imports, base " +
    "classes), with the enclosing function or class; `search_callers`: functions whose bodies " +
    "call it; `search_subclasses`: classes deriving from it (`indirect` for all depths).",
    "* Results give file, line range and, unless `print_body` is false, the body.",
    "* Long answers are cut at about 16,000 characters; `offset` and `limit` page through them " +
    "(the last line says which `offset` comes next), `print_body: false` shortens each entry.",
    "* The graph follows edits automatically; when nothing matches, close names are suggested.",
  ].join("\n"),
  parameters: [
    {
      name: "command",
      type: "string",
      description: "What to search for.",
      enum: [
        "search_function",
        "search_class",
        "search_class_method",
        "search_references",
        "search_callers",
        "search_subclasses",
      ],
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
    {
      name: "indirect",
      type: "boolean",
      description: "search_subclasses: also classes deriving from subclasses (default false).",
    },
    {
      name: "offset",
      type: "integer",
      description:
        "How many entries of the answer to skip (default 0), to see the rest of a long one.",
    },
    {
      name: "limit",
      type: "integer",
      description: "At most this many entries (default: as many as fit).",
    },
  ],
};
