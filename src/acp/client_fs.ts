/**
 * The file editor through the client's file system (`fs/read_text_file`, `fs/write_text_file`):
 * when the client offers both, the model views and edits what the editor holds — an unsaved
 * buffer included — instead of the bytes on disk.
 *
 * Where it runs: in this (the main) process, as a wrapper of the session's ordinary editor, not
 * in the tool host. The tool host has no channel back to the client, and the file access itself
 * is the client's; what must stay Deft's is the trust boundary, and that is kept here exactly as
 * the editor keeps it: the path is confined by its real path (`withConfinedFile`, the same
 * src/policy/workspace.ts rule and lock), a read-only sandbox refuses writes, and only the
 * confined real path is ever sent to the client. A path the editor would refuse never reaches
 * the client.
 *
 * The client opens that path again, by name and as the user, outside the sandbox; a model process
 * swapping a folder on the way for a link out of the workspace would lead it outside. So with a
 * sandbox every request to the client is made with every process in Deft's sandboxes stopped
 * (src/policy/freeze.ts) and the path's whole chain checked again while they are: its real path
 * is still itself and a regular file. When the freeze cannot be made (or is seen broken after a
 * read), the call is not delegated: the ordinary editor does it on disk, confined in its own
 * sandbox. The frozen time is bounded: a client that does not answer in time gets the session's
 * shells stopped (so a late write cannot be raced) before anything runs again. With `sandbox:
 * none` the model's shell already reaches everything the user does; the path is checked, nothing
 * is frozen. docs/acp.md says the same for users.
 *
 * The edit is planned by the editor's own code (`planReplace`, `planInsert`), so the
 * matches, refusals and snippets read as on disk; the client's text is edited character-exactly
 * (as UTF-8 bytes, spliced, nothing outside the change re-encoded).
 *
 * What stays with the ordinary editor (on disk): directories, files the client cannot read
 * (missing, not regular), `create` (a new file has no buffer) and the undo of a disk edit.
 */
import { isAbsolute } from "node:path";
import { FreezeRefused, freezeSandboxes } from "../policy/freeze.ts";
import { fail, ok, Tool, type ToolExecResult } from "../tools/base.ts";
import type { CallEffect } from "../tools/base.ts";
import { withConfinedFile } from "../tools/fs/confined.ts";
import { FileToolError } from "../tools/fs/errors.ts";
import { DEFAULT_MAX_FILE_BYTES, formatSize } from "../tools/fs/size.ts";
import { foldInput } from "../tools/edit/line_breaks.ts";
import { planInsert } from "../tools/edit/insert.ts";
import { splitLines } from "../tools/edit/numbering.ts";
import { viewOfLines } from "../tools/edit/view_file.ts";
import { planUnderEveryReading } from "../tools/edit/readings.ts";
import { planReplace } from "../tools/edit/replace.ts";
import { editSnippet } from "../tools/edit/snippet.ts";
import { type Splice, splicedParts } from "../tools/edit/splice.ts";
import {
  encodingOf,
  missingPathError,
  notRegularError,
  type TextFile,
} from "../tools/edit/text_file.ts";

/** The client's file system, as the session reaches it during a turn. */
export interface ClientFs {
  read(path: string): Promise<string>;
  write(path: string, content: string): Promise<void>;
  /**
   * Ends every process the model's shell started (the next command gets a fresh shell): for a
   * client that did not answer in time, whose late write must not meet a moving link.
   */
  stopShells?(): Promise<void>;
}

/** How long a frozen sandbox waits for the client's answer, unless told otherwise. */
export const CLIENT_ANSWER_MS = 10_000;

/** The client was not asked (or its answer was not used); the disk editor does the call. */
class NotDelegated extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/** One freeze at a time in this process: each covers every sandbox Deft started. */
let freezes: Promise<unknown> = Promise.resolve();

/** An edit made through the client, for the tool call's diff. */
export interface ClientEdit {
  before: string;
  after: string;
}

/** The editor, reading and writing through the client's file system. */
export class ClientFsEditor extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters;
  /** The last edit per real path and per path as written, taken once by the console. */
  readonly #edits = new Map<string, ClientEdit>();
  /** What `undo_edit` restores, per real path: the texts before and after each edit. */
  readonly #history = new Map<string, ClientEdit[]>();

  /** How long the client's answer is waited for, the sandboxes frozen. */
  readonly #answerMs: number;

  constructor(
    private readonly inner: Tool,
    private readonly fs: () => ClientFs | undefined,
    options: { answerMs?: number } = {},
  ) {
    super(inner.context);
    this.name = inner.name;
    this.description = inner.description;
    this.parameters = inner.parameters;
    this.#answerMs = options.answerMs ?? CLIENT_ANSWER_MS;
  }

  override effects(args: Record<string, unknown>): CallEffect | undefined {
    return this.inner.effects(args);
  }

  override close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * The client's text of `path` when a `str_replace` or `insert` there would go through the
   * client (a confined regular file); undefined otherwise. For the diff an approval shows.
   */
  async bufferText(path: string): Promise<string | undefined> {
    const fs = this.fs();
    if (!fs || !isAbsolute(path)) return undefined;
    let text: string | undefined;
    await withConfinedFile(this.context, path, false, async (real) => {
      if ((await Deno.stat(real)).isFile) {
        text = await this.#delegated(fs, real, "read", () => fs.read(real));
      }
      return ok("");
    }).catch(() => undefined);
    return text;
  }

  /** The edit the last call made to `path` through the client, once. */
  takeEdit(path: string): ClientEdit | undefined {
    const edit = this.#edits.get(path);
    this.#edits.delete(path);
    return edit;
  }

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    const fs = this.fs();
    const command = args.command as string;
    const path = args.path as string;
    const through = ["view", "str_replace", "insert", "undo_edit"].includes(command);
    if (!fs || !through || typeof path !== "string" || !isAbsolute(path)) {
      return this.inner.execute(args);
    }
    /** true: the disk editor's case; a string: why the client could not be used. */
    let disk: boolean | string = false;
    const result = withConfinedFile(this.context, path, command !== "view", async (real) => {
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(real);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) throw missingPathError(path);
        throw e;
      }
      if (info.isDirectory || (command === "undo_edit" && !this.#history.get(real)?.length)) {
        disk = true;
        return ok("");
      }
      if (!info.isFile) throw notRegularError(path);
      try {
        return await this.#run(fs, command, path, real, args);
      } catch (e) {
        if (!(e instanceof NotDelegated)) throw e;
        disk = e.why;
        return ok("");
      }
    });
    return result.then(async (r) => {
      if (disk === false) return r;
      const onDisk = await this.inner.execute(args);
      if (disk === true || onDisk.output == null) return onDisk;
      return {
        ...onDisk,
        output: `${onDisk.output}\n(The editor's buffer was not used: ${disk}. This call used ` +
          `the file on disk.)`,
      };
    });
  }

  /**
   * `op`, a request to the client about `real`, made safe against a model racing it: with a
   * sandbox, every sandboxed process is stopped while it runs and the path checked again first.
   * Throws `NotDelegated` when the client must not (or could not safely) be asked.
   */
  async #delegated<T>(
    fs: ClientFs,
    real: string,
    kind: "read" | "write",
    op: () => Promise<T>,
  ): Promise<T> {
    if (this.context.settings.sandbox === "none") {
      await this.#checkChain(real);
      return await op();
    }
    const mine = freezes.then(() => this.#frozen(fs, real, kind, op));
    freezes = mine.catch(() => {});
    return await mine;
  }

  async #frozen<T>(
    fs: ClientFs,
    real: string,
    kind: "read" | "write",
    op: () => Promise<T>,
  ): Promise<T> {
    let freeze;
    try {
      // The freeze's own bound, should this process stop answering it.
      freeze = await freezeSandboxes(this.#answerMs / 1000 + 10);
    } catch (e) {
      if (e instanceof FreezeRefused) {
        throw new NotDelegated(`the sandbox's processes could not be stopped (${e.message})`);
      }
      throw e;
    }
    let outcome: { value: T } | { error: unknown } | "late" = "late";
    let verdict: { held: boolean; why?: string } = { held: false };
    try {
      await this.#checkChain(real);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), this.#answerMs);
      });
      outcome = await Promise.race([
        op().then((value) => ({ value }), (error) => ({ error })),
        late,
      ]);
      clearTimeout(timer);
      // Before anything runs again: a write still to come must find no racer.
      if (outcome === "late") await fs.stopShells?.().catch(() => {});
    } finally {
      verdict = await freeze.release();
    }
    if (outcome === "late") {
      throw new FileToolError(
        `The editor (the ACP client) did not answer within ${this.#answerMs / 1000} s about ` +
          `${real}. The shell was stopped meanwhile (its next command starts a fresh one), so a ` +
          `late ${kind} cannot be misled. Check the file in the editor, then try again.`,
      );
    }
    if (!verdict.held) {
      if (kind === "read") {
        throw new NotDelegated(`the sandbox's processes were not all held still (${verdict.why})`);
      }
      throw new FileToolError(
        `The editor (the ACP client) wrote ${real}, but the sandbox's processes were not all held ` +
          `still meanwhile (${verdict.why}). Check ${real} and the files it could lead to.`,
      );
    }
    if ("error" in outcome) throw outcome.error;
    return outcome.value;
  }

  /**
   * With the sandboxes frozen: `real` still names itself through every folder (no link swapped in
   * on the way) and is a regular file; else the call goes to the disk editor, which resolves the
   * path again.
   */
  async #checkChain(real: string): Promise<void> {
    let now: string;
    let info: Deno.FileInfo;
    try {
      now = await Deno.realPath(real);
      info = await Deno.lstat(real);
    } catch {
      throw new NotDelegated("the path changed while it was being checked");
    }
    if (now !== real || !info.isFile) {
      throw new NotDelegated("the path changed while it was being checked");
    }
  }

  get #maxBytes(): number {
    return this.context.settings.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  async #read(fs: ClientFs, shown: string, real: string): Promise<TextFile> {
    let text: string;
    let info: Deno.FileInfo;
    try {
      // The file's facts are taken while the path is held still, with the client's text.
      [text, info] = await this.#delegated(
        fs,
        real,
        "read",
        async () => [await fs.read(real), await Deno.stat(real)] as const,
      );
    } catch (e) {
      if (e instanceof NotDelegated || e instanceof FileToolError) throw e;
      throw new FileToolError(
        `The editor (the ACP client) could not read ${shown}: ${errorText(e)}. Nothing was ` +
          `changed; check that the file is open or readable in the editor, then try again.`,
      );
    }
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > this.#maxBytes) {
      throw new FileToolError(
        `The file ${shown} is ${formatSize(bytes.length)} in the editor, larger than the ${
          formatSize(this.#maxBytes)
        } the editor edits. Edit it with bash instead, or raise the editor's maxFileBytes setting.`,
      );
    }
    const encoding = await encodingOf(bytes, shown, "edited", "utf-8");
    return { real, shown, bytes, encoding, info };
  }

  async #write(fs: ClientFs, shown: string, real: string, content: string): Promise<void> {
    try {
      await this.#delegated(fs, real, "write", () => fs.write(real, content));
    } catch (e) {
      if (e instanceof NotDelegated || e instanceof FileToolError) throw e;
      throw new FileToolError(
        `The editor (the ACP client) refused to write ${shown}: ${errorText(e)}. The file was ` +
          `not changed; check that it is writable in the editor, then repeat the edit.`,
      );
    }
  }

  async #run(
    fs: ClientFs,
    command: string,
    shown: string,
    real: string,
    args: Record<string, unknown>,
  ): Promise<ToolExecResult> {
    if (command === "view") return ok(this.#view(await this.#read(fs, shown, real), args));
    if (command === "undo_edit") {
      const stack = this.#history.get(real)!;
      const last = stack.at(-1)!;
      const now = await this.#read(fs, shown, real);
      if (new TextDecoder().decode(now.bytes) !== last.after) {
        return fail(
          `Cannot undo the last edit of ${shown}: the file has changed since that edit (by ` +
            `another tool or command), so undoing it could lose those changes. View the file and ` +
            `fix it with \`str_replace\` instead.`,
        );
      }
      await this.#write(fs, shown, real, last.before);
      stack.pop();
      this.#remember(shown, real, { before: last.after, after: last.before });
      return ok(`Last edit to ${shown} undone successfully.`);
    }
    const newStr = args.new_str as string | undefined;
    if (command === "str_replace") {
      const oldStr = args.old_str as string | undefined;
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
      if (foldInput(oldStr) === foldInput(newStr ?? "")) {
        return fail(
          "No replacement was performed: `new_str` is the same as `old_str`, so the file would " +
            "not change.",
        );
      }
      const file = await this.#read(fs, shown, real);
      const plan = planUnderEveryReading(file, (f) => planReplace(f, oldStr, newStr ?? ""));
      const snippet = await this.#commit(fs, file, plan.splice, plan.line);
      return ok(
        `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a ` +
          `snippet of ${shown}:\n${snippet}\nReview the changes and make sure they are as ` +
          `expected. Edit the file again if necessary.`,
      );
    }
    const insertLine = args.insert_line as number | undefined;
    if (insertLine === undefined) {
      return fail("Parameter `insert_line` is required and should be integer for command: insert");
    }
    if (newStr === undefined) return fail("Parameter `new_str` is required for command: insert");
    const file = await this.#read(fs, shown, real);
    const plan = planInsert(file, insertLine, newStr);
    const snippet = await this.#commit(fs, file, plan.splice, plan.line);
    return ok(
      `The file ${shown} has been edited. Here's the result of running \`cat -n\` on a snippet ` +
        `of the edited file:\n${snippet}\nReview the changes and make sure they are as ` +
        `expected (correct indentation, no duplicate lines, etc). Edit the file again if ` +
        `necessary.`,
    );
  }

  async #commit(fs: ClientFs, file: TextFile, splice: Splice, line: number): Promise<string> {
    const parts = splicedParts(file.bytes, splice);
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.length;
    }
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    const before = decoder.decode(file.bytes);
    const after = decoder.decode(joined);
    await this.#write(fs, file.shown, file.real, after);
    const stack = this.#history.get(file.real) ?? [];
    stack.push({ before, after });
    this.#history.set(file.real, stack);
    this.#remember(file.shown, file.real, { before, after });
    return editSnippet(file.bytes, file.encoding, splice, line);
  }

  #remember(shown: string, real: string, edit: ClientEdit): void {
    this.#edits.set(shown, edit);
    this.#edits.set(real, edit);
  }

  /** `view` of the buffer, with the disk view's numbering, range rules and messages. */
  #view(file: TextFile, args: Record<string, unknown>): string {
    const { shown } = file;
    const range = Array.isArray(args.view_range) && args.view_range.length > 0
      ? args.view_range as number[]
      : undefined;
    if (range !== undefined && range.length !== 2) {
      throw new FileToolError("Invalid `view_range`. It should be a list of two integers.");
    }
    const [from, to] = range ?? [1, -1];
    if (range !== undefined && to !== -1 && (to < from || to < 1)) {
      throw new FileToolError(
        `Invalid \`view_range\`: [${from}, ${to}]. Its second element \`${to}\` should be larger ` +
          `or equal than its first \`${from}\` (or -1 for the end of the file)`,
      );
    }
    const all = splitLines(
      new TextDecoder("utf-8", { ignoreBOM: true }).decode(
        file.bytes.subarray(file.encoding.bomLength),
      ),
    );
    return viewOfLines(all, shown, from, to, range !== undefined);
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
