/** The `json_edit_tool` tool as the model sees it: name, description, parameters. */
import type { CallEffect } from "../base.ts";
import type { ToolDefinitionSource } from "../catalog_types.ts";

/** `json_edit_tool`'s model-facing definition (kept apart from the implementation, which loads lazily). */
export const JSON_EDIT: ToolDefinitionSource = {
  name: "json_edit_tool",
  description: [
    "View and edit JSON (and JSONC) files by JSONPath.",
    "* `view`: the whole file, or the values matching `json_path`.",
    "* `set`: replace every value matching `json_path` with `value`.",
    "* `add`: add `value` at `json_path`: a new key of an object (`$.config.new_key`), or an " +
    "array element inserted at an index (`$.items[2]`; the index one past the end appends).",
    "* `remove`: delete every value matching `json_path`.",
    "* JSONPath examples: `$.name`, `$.users[0].email`, `$.items[*].price`, " +
    "`$.users[?(@.age > 30)]`.",
    "* Only the edited values change in the file: indentation, key order and comments stay.",
    "* `file_path` must be absolute and inside the workspace.",
  ].join("\n"),
  parameters: [
    {
      name: "operation",
      type: "string",
      description: "The operation to run.",
      enum: ["view", "set", "add", "remove"],
      required: true,
    },
    {
      name: "file_path",
      type: "string",
      description: "Absolute path of the JSON file.",
      required: true,
    },
    {
      name: "json_path",
      type: "string",
      description: "JSONPath expression (e.g. `$.users[0].name`). Required for set, add, remove.",
    },
    {
      name: "value",
      description: "For set and add: the value, any JSON (string, number, boolean, null, array, " +
        "object).",
    },
    {
      name: "pretty_print",
      type: "boolean",
      description: "Lay out an inserted object or array over several lines, indented like the " +
        "file (default true); false writes it on one line.",
    },
  ],
};

/** What a `json_edit_tool` call does: `view` reads; the rest change the file at `file_path`. */
export function jsonEditEffects(args: Record<string, unknown>): CallEffect {
  if (args.operation === "view") return { kind: "read" };
  const path = typeof args.file_path === "string" ? args.file_path : "";
  const jsonPath = typeof args.json_path === "string" ? args.json_path : "";
  const shown = JSON.stringify(args.value) ?? "";
  const value = args.value === undefined
    ? ""
    : ` = ${shown.length > 2000 ? `${shown.slice(0, 1999)}…` : shown}`;
  return { kind: "edit", path, summary: `${path}: ${args.operation} ${jsonPath}${value}` };
}
