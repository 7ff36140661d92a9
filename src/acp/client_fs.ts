/**
 * The editor through the client's file system (`fs/read_text_file`, `fs/write_text_file`): when
 * the client offers both, the model views and edits what the editor holds — an unsaved buffer
 * included — instead of the bytes on disk.
 *
 * The editor is the one editor (src/tools/edit): its commands, checks, confinement, messages and
 * undo history, over a second `FileStore`, the client's buffers (`ClientFsStore`, here). It runs
 * in this (the main) process, as a wrapper of the session's ordinary editor, not in the tool
 * host, which has no channel back to the client. Only the confined real path is ever sent to the
 * client, and each request is made with the sandboxes frozen (client_freeze.ts).
 *
 * What the buffers do not hold goes to the ordinary editor, on disk (`StoreDeclined`):
 * directories, `create` (a new file has no buffer), the undo of an edit made on disk, and a call
 * whose file could not be reached safely (the model is told). The client's text is edited
 * character-exactly: as UTF-8 bytes, spliced, nothing outside the change re-encoded.
 */
import { isAbsolute } from "node:path";
import { type CallPlan, ok, Tool, type ToolExecResult } from "../tools/base.ts";
import type { CallEffect } from "../tools/base.ts";
import { withConfinedFile } from "../tools/fs/confined.ts";
import { FileToolError } from "../tools/fs/errors.ts";
import { type FileStore, type OpenedFile, StoreDeclined } from "../tools/edit/store.ts";
import { EditTool } from "../tools/edit/tool.ts";
import { askClient, CLIENT_ANSWER_MS, type FreezeOptions } from "./client_freeze.ts";

export { CLIENT_ANSWER_MS } from "./client_freeze.ts";

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

/** An edit made through the client, for the tool call's diff. */
export interface ClientEdit {
  before: string;
  after: string;
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The client's buffers as a store, for one call: each file is read from the client once, and its
 * facts (kind, mode) are the disk's; its size is the buffer's.
 */
export class ClientFsStore implements FileStore {
  readonly text = true;
  readonly #read = new Map<string, { bytes: Uint8Array; info: Deno.FileInfo }>();
  /** The write this call made, if any. */
  written?: { real: string; edit: ClientEdit };

  constructor(private readonly fs: ClientFs, private readonly options: FreezeOptions) {}

  async stat(real: string, shown: string): Promise<Deno.FileInfo> {
    const info = await Deno.stat(real);
    return info.isFile ? (await this.read(real, shown)).info : info;
  }

  async read(real: string, shown: string): Promise<{ bytes: Uint8Array; info: Deno.FileInfo }> {
    const known = this.#read.get(real);
    if (known) return known;
    let text: string;
    let info: Deno.FileInfo;
    try {
      // The file's facts are taken while the path is held still, with the client's text.
      [text, info] = await askClient(
        real,
        "read",
        async () => [await this.fs.read(real), await Deno.stat(real)] as const,
        this.options,
      );
    } catch (e) {
      if (e instanceof StoreDeclined || e instanceof FileToolError) throw e;
      throw new FileToolError(
        `The editor (the ACP client) could not read ${shown}: ${errorText(e)}. Nothing was ` +
          `changed; check that the file is open or readable in the editor, then try again.`,
      );
    }
    const bytes = new TextEncoder().encode(text);
    const read = { bytes, info: { ...info, size: bytes.length } };
    this.#read.set(real, read);
    return read;
  }

  async open(real: string, shown: string): Promise<OpenedFile> {
    const { bytes, info } = await this.read(real, shown);
    let at = 0;
    const file = {
      read(buffer: Uint8Array): Promise<number | null> {
        if (at >= bytes.length) return Promise.resolve(null);
        const n = Math.min(buffer.length, bytes.length - at);
        buffer.set(bytes.subarray(at, at + n));
        at += n;
        return Promise.resolve(n);
      },
      close() {},
    };
    return { file, info, confirm: () => {} };
  }

  /** Whether the buffer may be written is the client's to say: its refusal is the error. */
  checkWritable(): Promise<void> {
    return Promise.resolve();
  }

  async write(
    real: string,
    shown: string,
    parts: readonly Uint8Array[],
    was: Deno.FileInfo,
  ): Promise<void> {
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.length;
    }
    const before = decoder.decode(this.#read.get(real)?.bytes ?? new Uint8Array());
    const after = decoder.decode(joined);
    try {
      await askClient(real, "write", () => this.fs.write(real, after), this.options);
    } catch (e) {
      if (e instanceof StoreDeclined || e instanceof FileToolError) throw e;
      throw new FileToolError(
        `The editor (the ACP client) refused to write ${shown}: ${errorText(e)}. The file was ` +
          `not changed; check that it is writable in the editor, then repeat the edit.`,
      );
    }
    this.#read.set(real, { bytes: joined, info: { ...was, size: joined.length } });
    this.written = { real, edit: { before, after } };
  }
}

/** The editor, reading and writing through the client's file system when it is there. */
export class ClientFsEditor extends Tool {
  readonly name: string;
  readonly description: string;
  readonly parameters;
  /** The one editor, with the history of the edits made through the client. */
  readonly #editor: EditTool;
  /** The last edit per real path and per path as written, taken once by the console. */
  readonly #edits = new Map<string, ClientEdit>();
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
    this.#editor = new EditTool(inner.context);
  }

  override effects(args: Record<string, unknown>): CallEffect | undefined {
    return this.inner.effects(args);
  }

  override close(): Promise<void> {
    return this.inner.close();
  }

  #store(fs: ClientFs): ClientFsStore {
    return new ClientFsStore(fs, {
      sandbox: this.context.settings.sandbox,
      answerMs: this.#answerMs,
      stopShells: fs.stopShells && (() => fs.stopShells!()),
    });
  }

  /**
   * The client's text of `path` when a `str_replace` or `insert` there would go through the
   * client (a confined regular file); undefined otherwise. For the diff an approval shows.
   */
  async bufferText(path: string): Promise<string | undefined> {
    const fs = this.fs();
    if (!fs || !isAbsolute(path)) return undefined;
    const store = this.#store(fs);
    let text: string | undefined;
    await withConfinedFile(this.context, path, false, async (real) => {
      if ((await store.stat(real, path)).isFile) {
        text = decoder.decode((await store.read(real, path)).bytes);
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

  async execute(args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    const fs = this.fs();
    if (!fs) return await this.inner.execute(args, plan);
    const store = this.#store(fs);
    let result: ToolExecResult;
    try {
      result = await this.#editor.executeIn(store, args);
    } catch (e) {
      if (!(e instanceof StoreDeclined)) throw e;
      const onDisk = await this.inner.execute(args, plan);
      if (e.why === undefined || onDisk.output == null) return onDisk;
      return {
        ...onDisk,
        output: `${onDisk.output}\n(The editor's buffer was not used: ${e.why}. This call used ` +
          `the file on disk.)`,
      };
    }
    if (store.written) {
      this.#edits.set(String(args.path), store.written.edit);
      this.#edits.set(store.written.real, store.written.edit);
    }
    return result;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
