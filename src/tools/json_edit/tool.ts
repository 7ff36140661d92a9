/** `json_edit_tool`: view and change JSON files by JSONPath, keeping their formatting. */
import { readOnlyRefusal } from "../../policy/read_only.ts";
import { JSON_EDIT } from "./definition.ts";
import { isAbsolute, join, normalize } from "node:path";
import { confine, OutsideWorkspaceError, UnresolvablePathError } from "../../policy/workspace.ts";
import { fail, ok, Tool, type ToolExecResult } from "../base.ts";
import { preserving, writeFileAtomic } from "../fs/atomic.ts";
import { FileToolError } from "../fs/errors.ts";
import { withFileLock } from "../fs/lock.ts";
import { DEFAULT_MAX_FILE_BYTES, formatSize } from "../fs/size.ts";
import { assertWritable } from "../fs/writable.ts";
import type { JsonEditRequest } from "./operations.ts";
import { readStable } from "../fs/stable.ts";

type Operation = JsonEditRequest["operation"];

/** The JSON editor. */
export class JsonEditTool extends Tool {
  readonly name = JSON_EDIT.name;
  readonly description = JSON_EDIT.description;
  readonly parameters = JSON_EDIT.parameters;

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
    if (operation !== "view" && this.context.settings.sandbox === "read-only") {
      return Promise.resolve(fail(readOnlyRefusal(path)));
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
    const bytes = await readStable(real);
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
