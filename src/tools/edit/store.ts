/**
 * Where the editor's files live. The editor (tool.ts) holds the commands, their checks, the
 * confinement and the undo history; a store only reads and writes bytes. Two stores exist: the
 * disk (disk_store.ts) and an ACP client's buffers (src/acp/client_fs.ts), so the same call gets
 * the same checks and the same messages in both.
 *
 * Every path a store is given is a real path the editor has confined to the workspace and holds
 * the file lock of; `shown` is the path as the model wrote it, for messages.
 */

/** A file opened for reading in steps (a streamed view); `null` at its end. */
export interface OpenedFile {
  file: { read(buffer: Uint8Array): Promise<number | null>; close(): void };
  info: Deno.FileInfo;
  /** After the file is closed and before what was read is used: it is still the file opened. */
  confirm(): void;
}

/** What a store does. */
export interface FileStore {
  /**
   * Holds text, not bytes (an editor's buffers): a file reads as its text in UTF-8, so the
   * `encoding` a call states does not apply.
   */
  readonly text?: true;
  /** What is at `real`, links followed; throws `Deno.errors.NotFound` when nothing is. */
  stat(real: string, shown: string): Promise<Deno.FileInfo>;
  /** The regular file at `real`, whole, with its metadata as read. */
  read(real: string, shown: string): Promise<{ bytes: Uint8Array; info: Deno.FileInfo }>;
  /** The regular file at `real`, opened to be read in steps. */
  open(real: string, shown: string): Promise<OpenedFile>;
  /** Throws `FileToolError` when the file at `real` may not be replaced (permissions). */
  checkWritable(real: string, shown: string): Promise<void>;
  /**
   * Replaces the content of the file at `real` by the concatenation of `parts`, whole or not at
   * all; `was` is the file as it was read (its mode, owner and links are kept).
   */
  write(
    real: string,
    shown: string,
    parts: readonly Uint8Array[],
    was: Deno.FileInfo,
  ): Promise<void>;
  /** Folders and new files; a store of buffers has none (`StoreDeclined` for such a call). */
  readonly tree?: FileTree;
}

/** The folders of a store, and the files made and removed in them. */
export interface FileTree {
  /** Whether anything (a dangling link included) is at `path`. */
  exists(path: string): Promise<boolean>;
  makeDir(path: string): Promise<void>;
  /** Removes `dir` if it is an empty folder; leaves it otherwise. */
  removeEmptyDir(dir: string): Promise<void>;
  /** Writes a new file at `real`, whole or not at all. */
  create(real: string, shown: string, content: Uint8Array): Promise<void>;
  /** Removes the file at `real`, if it is still the one read as `info`. */
  remove(real: string, shown: string, info: Deno.FileInfo): Promise<void>;
  /** The entries of the folder `dir`. */
  list(dir: string): AsyncIterable<Deno.DirEntry>;
}

/**
 * A store cannot serve a call (a folder, a new file, an edit it did not make, or a file it could
 * not reach safely). Thrown before anything changed; `why`, when given, is worth telling the
 * model (the call is then made on disk).
 */
export class StoreDeclined extends Error {
  constructor(readonly why?: string) {
    super(why ?? "the store does not hold this");
    this.name = "StoreDeclined";
  }
}

/** The tree of `store`, or `StoreDeclined` when it has none. */
export function treeOf(store: FileStore): FileTree {
  if (!store.tree) throw new StoreDeclined();
  return store.tree;
}
