/** `json_edit_tool`: view and change JSON files by JSONPath, keeping their formatting. */
import { isAbsolute, join, normalize } from "node:path";
import { confine, OutsideWorkspaceError, UnresolvablePathError } from "../../policy/workspace.ts";
import { fail, ok, Tool, type ToolExecResult, type ToolParameter } from "../base.ts";
import { preserving, writeFileAtomic } from "../fs/atomic.ts";
import { FileToolError } from "../fs/errors.ts";
import { withFileLock } from "../fs/lock.ts";
import { DEFAULT_MAX_FILE_BYTES, formatSize } from "../fs/size.ts";
import { assertWritable } from "../fs/writable.ts";
import type { JsonEditRequest } from "./operations.ts";

type Operation = JsonEditRequest["operation"];

/** The JSON editor. */
export class JsonEditTool extends Tool {
  readonly name = "json_edit_tool";
  readonly description = [
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
  ].join("\n");
  readonly parameters: readonly ToolParameter[] = [
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
  ];

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    const operation = args.operation as Operation;
    const path = args.file_path as string;
    if (!isAbsolute(path)) {
      return Promise.resolve(fail(
        `File path must be absolute: ${path}. Maybe you meant ${
          join(this.context.workspace, path)
        }?`,
      ));
    }
    const jsonPath = args.json_path as string | undefined;
    if (operation !== "view" && jsonPath === undefined) {
      return Promise.resolve(fail(
        `json_path parameter is required and must be a string for the '${operation}' operation.`,
      ));
    }
    if ((operation === "set" || operation === "add") && !("value" in args)) {
      return Promise.resolve(fail(
        `A 'value' parameter is required for the '${operation}' operation.`,
      ));
    }
    const request: JsonEditRequest = {
      operation,
      shown: path,
      jsonPath,
      value: args.value,
      prettyPrint: args.pretty_print !== false,
    };
    // Locked on the path as written first, so calls on one file keep their order (see the editor).
    return withFileLock(`path:${normalize(path)}`, async () => {
      try {
        const real = await confine(this.context.workspace, path);
        return await withFileLock(real, () => this.#run(real, request));
      } catch (e) {
        if (
          e instanceof FileToolError || e instanceof OutsideWorkspaceError ||
          e instanceof UnresolvablePathError
        ) {
          return fail(e.message);
        }
        throw e;
      }
    });
  }

  async #run(real: string, request: JsonEditRequest): Promise<ToolExecResult> {
    const { shown } = request;
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(real);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
        return fail(`File does not exist: ${shown}`);
      }
      throw e;
    }
    if (!info.isFile) return fail(`Not a regular file: ${shown}. json_edit_tool edits JSON files.`);
    const maxBytes = this.context.settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (info.size > maxBytes) {
      return fail(
        `The file ${shown} is ${formatSize(info.size)}, larger than the ${
          formatSize(maxBytes)
        } json_edit_tool reads. Query it with bash instead (e.g. \`jq\`).`,
      );
    }
    const bytes = await Deno.readFile(real);
    // Loaded on first use: jsonc-parser and jsonpath-plus stay out of the CLI's start-up.
    const { runJsonEdit } = await import("./operations.ts");
    const outcome = runJsonEdit(bytes, request);
    if (outcome.bytes) {
      await assertWritable(real, shown);
      try {
        await writeFileAtomic(real, [outcome.bytes], preserving(info));
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) throw e;
        return fail(
          `Ran into ${e instanceof Error ? e.message : String(e)} while trying to write to ` +
            `${shown}; the file was not changed.`,
        );
      }
    }
    return ok(outcome.output);
  }
}
