/** `json_edit_tool`: view and change JSON files by JSONPath, keeping their formatting. */
import { JSON_EDIT } from "./definition.ts";
import { relativePathError } from "../edit/near_miss.ts";
import { isAbsolute } from "node:path";
import { fail, ok, Tool, type ToolExecResult } from "../base.ts";
import { preserving, writeFileAtomic } from "../fs/atomic.ts";
import { FileToolError } from "../fs/errors.ts";
import { readConfinedFile, type ReadRefusals, withConfinedFile } from "../fs/confined.ts";
import { DEFAULT_MAX_FILE_BYTES } from "../fs/size.ts";
import { assertWritable } from "../fs/writable.ts";
import type { JsonEditRequest } from "./operations.ts";

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
        relativePathError(`File path must be absolute: ${path}.`, path, this.context.workspace),
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
    return withConfinedFile(
      this.context,
      path,
      operation !== "view",
      (real) => this.#run(real, request),
    );
  }

  async #run(real: string, request: JsonEditRequest): Promise<ToolExecResult> {
    const { shown } = request;
    const maxBytes = this.context.settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    const { bytes, info } = await readConfinedFile(real, shown, maxBytes, JSON_REFUSALS);
    // Loaded on first use: jsonc-parser and jsonpath-plus stay out of the CLI's start-up.
    const { runJsonEdit } = await import("./operations.ts");
    const outcome = runJsonEdit(bytes, request);
    if (outcome.bytes) {
      await assertWritable(real, shown);
      try {
        await writeFileAtomic(real, [outcome.bytes], { ...preserving(info), shown });
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable || e instanceof FileToolError) throw e;
        return fail(
          `Ran into ${e instanceof Error ? e.message : String(e)} while trying to write to ` +
            `${shown}; the file was not changed.`,
        );
      }
    }
    return ok(outcome.output);
  }
}

const JSON_REFUSALS: ReadRefusals = {
  missing: (shown) => `File does not exist: ${shown}`,
  notRegular: (shown) => `Not a regular file: ${shown}. json_edit_tool edits JSON files.`,
  tooLarge: (shown, size, limit) =>
    `The file ${shown} is ${size}, larger than the ${limit} json_edit_tool reads. Query it ` +
    `with bash instead (e.g. \`jq\`).`,
};
