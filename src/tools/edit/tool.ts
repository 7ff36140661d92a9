/**
 * `str_replace_based_edit_tool`: view, create and edit files, byte-exact and confined. The
 * commands, their checks, the confinement and the undo history are here once; where the files
 * live is a `FileStore` (the disk, or an ACP client's buffers).
 */
import { EDIT } from "./definition.ts";
import { dirname, isAbsolute } from "node:path";
import { fail, ok, Tool, type ToolContext, type ToolExecResult } from "../base.ts";
import { isMissing, withConfinedFile } from "../fs/confined.ts";
import { FileToolError } from "../fs/errors.ts";
import { refuseProtected } from "../fs/writable.ts";
import { DEFAULT_MAX_FILE_BYTES } from "../fs/size.ts";
import { checkName, DecodeError, encode, isUtf16, UnencodableError } from "./encoding.ts";
import { type CreateRecord, EditHistory, type SpliceRecord } from "./history.ts";
import { planInsert } from "./insert.ts";
import { foldInput } from "./line_breaks.ts";
import { relativePathError } from "./near_miss.ts";
import { planUnderEveryReading, uncertainEditNote } from "./readings.ts";
import { planReplace } from "./replace.ts";
import { editSnippet } from "./snippet.ts";
import { bytesAt, type Splice, splicedParts } from "./splice.ts";
import { DISK_STORE } from "./disk_store.ts";
import { type FileStore, type FileTree, StoreDeclined, treeOf } from "./store.ts";
import {
  loadTextFile,
  missingPathError,
  notRegularError,
  statEditable,
  type TextFile,
} from "./text_file.ts";
import { viewDirectory } from "./view_dir.ts";
import { viewFile } from "./view_file.ts";

/** The file editor. */
export class EditTool extends Tool {
  readonly name = EDIT.name;
  readonly description = EDIT.description;
  readonly parameters = EDIT.parameters;

  readonly #history = new EditHistory();
  readonly #store: FileStore;

  /** An editor over `store` (the disk unless told otherwise). */
  constructor(context: ToolContext, store: FileStore = DISK_STORE) {
    super(context);
    this.#store = store;
  }

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return this.executeIn(this.#store, args);
  }

  /**
   * Runs a call on the files of `store`, with this editor's history: for a front end whose store
   * is reached anew for each call (an ACP client's, through the running prompt). Throws
   * `StoreDeclined`, before anything changed, when `store` cannot serve the call.
   */
  executeIn(store: FileStore, args: Record<string, unknown>): Promise<ToolExecResult> {
    const command = args.command as string;
    const path = args.path as string;
    if (!isAbsolute(path)) {
      return Promise.resolve(fail(relativePathError(
        `The path ${path} is not an absolute path, it should start with \`/\`.`,
        path,
        this.context.workspace,
      )));
    }
    return withConfinedFile(
      this.context,
      path,
      command !== "view",
      (real) => this.#run(store, command, path, real, args),
    );
  }

  get #maxBytes(): number {
    return this.context.settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  #run(
    store: FileStore,
    command: string,
    shown: string,
    real: string,
    args: Record<string, unknown>,
  ): Promise<ToolExecResult> {
    // A store of text has no bytes to read in another encoding.
    const stated = !store.text && typeof args.encoding === "string" && args.encoding.trim() !== ""
      ? args.encoding
      : undefined;
    switch (command) {
      case "view":
        return this.#view(store, shown, real, args.view_range as number[] | undefined, stated);
      case "create":
        return this.#create(store, shown, real, args.file_text as string | undefined, stated);
      case "str_replace":
        return this.#strReplace(
          store,
          shown,
          real,
          args.old_str as string | undefined,
          args.new_str as string | undefined,
          stated,
        );
      case "insert":
        return this.#insert(
          store,
          shown,
          real,
          args.insert_line as number | undefined,
          args.new_str as string | undefined,
          stated,
        );
      case "undo_edit":
        return this.#undo(store, shown, real);
    }
    return Promise.resolve(fail(
      `Unrecognized command ${command}. The allowed commands for the ${this.name} tool are: ` +
        `view, create, str_replace, insert, undo_edit`,
    ));
  }

  async #view(
    store: FileStore,
    shown: string,
    real: string,
    range?: number[],
    encoding?: string,
  ): Promise<ToolExecResult> {
    let info: Deno.FileInfo;
    try {
      info = await store.stat(real, shown);
    } catch (e) {
      if (isMissing(e)) throw missingPathError(shown);
      throw e;
    }
    if (info.isDirectory) {
      const tree = treeOf(store);
      if (range !== undefined) {
        return fail(
          "The `view_range` parameter is not allowed when `path` points to a directory.",
        );
      }
      return ok(await viewDirectory(tree.list, real, shown));
    }
    if (!info.isFile) throw notRegularError(shown);
    const maxBytes = this.#maxBytes;
    return ok(await viewFile({ store, real, shown, info, range, maxBytes, encoding }));
  }

  async #create(
    store: FileStore,
    shown: string,
    real: string,
    fileText?: string,
    stated?: string,
  ): Promise<ToolExecResult> {
    const tree = treeOf(store);
    if (fileText === undefined) {
      return fail("Parameter `file_text` is required and must be a string for command: create");
    }
    if (await tree.exists(real)) {
      return fail(
        `File already exists at: ${shown}. Cannot overwrite files using command \`create\`.`,
      );
    }
    let content: Uint8Array;
    try {
      content = await encodeNewFile(fileText, stated);
    } catch (e) {
      if (e instanceof DecodeError) return fail(`No file was created: ${e.message}.`);
      if (e instanceof UnencodableError && e.encoding !== "utf-8") {
        return fail(
          `No file was created: \`file_text\` contains ${e.character}, which ${e.encoding} ` +
            `cannot represent. Use characters the encoding has, or create the file in UTF-8.`,
        );
      }
      if (e instanceof UnencodableError) {
        return fail(
          `No file was created: \`file_text\` contains ${e.character}, a lone UTF-16 surrogate ` +
            `that UTF-8 cannot represent.`,
        );
      }
      throw e;
    }
    let createdDirs: string[] = [];
    try {
      createdDirs = await makeParents(tree, dirname(real));
      await tree.create(real, shown, content);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable || e instanceof FileToolError) throw e;
      await refuseProtected(e, real, shown);
      if (e instanceof Deno.errors.NotFound) {
        // The folder went away (or was swapped) between its check and the write.
        return fail(
          `No file was created at ${shown}: its folder changed while the editor was using it ` +
            `(${errorText(e)}). Check that the folder exists, then create the file again.`,
        );
      }
      return fail(`Ran into ${errorText(e)} while trying to write to ${shown}`);
    }
    const record: CreateRecord = { kind: "create", content, createdDirs };
    this.#history.push(real, record);
    return ok(`File created successfully at: ${shown}`);
  }

  async #strReplace(
    store: FileStore,
    shown: string,
    real: string,
    oldStr?: string,
    newStr?: string,
    stated?: string,
  ): Promise<ToolExecResult> {
    if (oldStr === undefined) {
      return fail(
        "Parameter `old_str` is required and should be a string for command: str_replace",
      );
    }
    if (oldStr === "") {
      return fail(
        "No replacement was performed: `old_str` is empty. It must be the exact text to " +
          "replace; to add text without replacing any, use the `insert` command.",
      );
    }
    const replacement = newStr ?? "";
    if (foldInput(oldStr) === foldInput(replacement)) {
      return fail(
        "No replacement was performed: `new_str` is the same as `old_str`, so the file would " +
          "not change.",
      );
    }
    // An uncertain encoding stops only an edit whose bytes depend on the reading.
    const file = await loadTextFile(store, real, shown, this.#maxBytes, stated, "keep");
    await store.checkWritable(real, shown);
    const plan = planUnderEveryReading(file, (read) => planReplace(read, oldStr, replacement));
    const snippet = await this.#commit(store, file, plan.splice, plan.line);
    return ok(
      `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a snippet ` +
        `of ${shown}:\n${snippet}\nReview the changes and make sure they are as expected. Edit ` +
        `the file again if necessary.${uncertainEditNote(file.encoding)}`,
    );
  }

  async #insert(
    store: FileStore,
    shown: string,
    real: string,
    insertLine?: number,
    newStr?: string,
    stated?: string,
  ): Promise<ToolExecResult> {
    if (insertLine === undefined) {
      return fail("Parameter `insert_line` is required and should be integer for command: insert");
    }
    if (newStr === undefined) return fail("Parameter `new_str` is required for command: insert");
    const file = await loadTextFile(store, real, shown, this.#maxBytes, stated);
    await store.checkWritable(real, shown);
    const plan = planInsert(file, insertLine, newStr);
    const snippet = await this.#commit(store, file, plan.splice, plan.line);
    return ok(
      `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a snippet ` +
        `of the edited file:\n${snippet}\nReview the changes and make sure they are as ` +
        `expected (correct indentation, no duplicate lines, etc). Edit the file again if ` +
        `necessary.`,
    );
  }

  // Writes the splice atomically, remembers how to undo it, and returns the snippet.
  async #commit(store: FileStore, file: TextFile, splice: Splice, line: number): Promise<string> {
    await writeSpliced(store, file.real, file.shown, file.bytes, splice, file.info);
    const record: SpliceRecord = {
      kind: "splice",
      start: splice.start,
      removed: file.bytes.slice(splice.start, splice.end),
      inserted: splice.insert,
      sizeAfter: file.bytes.length - (splice.end - splice.start) + splice.insert.length,
      line,
      encoding: file.encoding,
    };
    this.#history.push(file.real, record);
    return editSnippet(file.bytes, file.encoding, splice, line);
  }

  async #undo(store: FileStore, shown: string, real: string): Promise<ToolExecResult> {
    const record = this.#history.peek(real);
    if (!record) {
      // A store of buffers made only some of the file's edits: the rest are the disk editor's.
      treeOf(store);
      return fail(`No edit history found for ${shown}.`);
    }
    if (record.kind === "create") return await this.#undoCreate(store, shown, real, record);
    await statEditable(store, real, shown);
    const read = await store.read(real, shown);
    const { info } = read;
    const bytes = info.size === record.sizeAfter ? read.bytes : undefined;
    if (!bytes || !bytesAt(bytes, record.start, record.inserted)) {
      return fail(
        `Cannot undo the last edit of ${shown}: the file has changed since that edit (by ` +
          `another tool or command), so undoing it could lose those changes. View the file and ` +
          `fix it with \`str_replace\` instead.`,
      );
    }
    const splice: Splice = {
      start: record.start,
      end: record.start + record.inserted.length,
      insert: record.removed,
    };
    await writeSpliced(store, real, shown, bytes, splice, info);
    this.#history.pop(real);
    const snippet = editSnippet(bytes, record.encoding, splice, record.line);
    return ok(
      `Last edit to ${shown} undone successfully. Here's the result of running \`cat -n\` on a ` +
        `snippet of ${shown}:\n${snippet}\n`,
    );
  }

  async #undoCreate(
    store: FileStore,
    shown: string,
    real: string,
    record: CreateRecord,
  ): Promise<ToolExecResult> {
    const tree = treeOf(store);
    if (!(await tree.exists(real))) {
      this.#history.pop(real);
      return ok(`${shown} no longer exists, so its creation needs no undoing.`);
    }
    const { bytes, info } = await store.read(real, shown);
    if (bytes.length !== record.content.length || !bytesAt(bytes, 0, record.content)) {
      return fail(
        `Cannot undo the creation of ${shown}: the file has changed since it was created, so ` +
          `removing it could lose those changes. Remove it with bash if that is intended.`,
      );
    }
    await tree.remove(real, shown, info);
    for (const dir of [...record.createdDirs].reverse()) {
      // Only directories that are still empty go; anything put there since is kept.
      await tree.removeEmptyDir(dir);
    }
    this.#history.pop(real);
    return ok(
      `Last edit to ${shown} undone successfully: the file had been made by \`create\`, so it ` +
        `has been removed.`,
    );
  }
}

async function writeSpliced(
  store: FileStore,
  real: string,
  shown: string,
  bytes: Uint8Array,
  splice: Splice,
  info: Deno.FileInfo,
): Promise<void> {
  try {
    await store.write(real, shown, splicedParts(bytes, splice), info);
  } catch (e) {
    if (
      e instanceof Deno.errors.NotCapable || e instanceof FileToolError ||
      e instanceof StoreDeclined
    ) throw e;
    throw new FileToolError(
      `Ran into ${errorText(e)} while trying to write to ${shown}; the file was not changed.`,
    );
  }
}

// Creates `dir` and its missing parents; returns the ones it made, outermost first.
async function makeParents(tree: FileTree, dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let d = dir; !(await tree.exists(d)); d = dirname(d)) missing.unshift(d);
  for (const d of missing) await tree.makeDir(d);
  return missing;
}

// `file_text` as bytes: UTF-8 unless the caller stated an encoding (UTF-16 gets a byte-order mark,
// so that the file is read back as UTF-16).
async function encodeNewFile(text: string, stated?: string): Promise<Uint8Array> {
  if (stated === undefined) return encode(text, "utf-8");
  let name = await checkName(stated);
  if (name === "utf-16" || name === "utf16") name = "utf-16le";
  const body = encode(text, name);
  if (!isUtf16(name)) return body;
  const bom = name === "utf-16le" ? Uint8Array.of(0xff, 0xfe) : Uint8Array.of(0xfe, 0xff);
  const out = new Uint8Array(bom.length + body.length);
  out.set(bom);
  out.set(body, bom.length);
  return out;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
