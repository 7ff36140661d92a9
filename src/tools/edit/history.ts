/** Undo records: enough to take back each edit of a file, most recent first. */

import type { Encoding } from "./encoding.ts";

/** Undo levels kept per file; older ones are dropped. */
export const MAX_UNDO_LEVELS = 100;

/** An edit that replaced `removed` with `inserted` at byte `start`, leaving `sizeAfter` bytes. */
export interface SpliceRecord {
  kind: "splice";
  start: number;
  removed: Uint8Array;
  inserted: Uint8Array;
  sizeAfter: number;
  /** 1-based line of `start`, for the snippet shown on undo. */
  line: number;
  /** The file's encoding, to show that snippet in. */
  encoding: Encoding;
}

/** A `create`: undoing it removes the file (and the directories it made, if still empty). */
export interface CreateRecord {
  kind: "create";
  content: Uint8Array;
  /** Directories `create` made, outermost first. */
  createdDirs: string[];
}

/** One undoable edit. */
export type EditRecord = SpliceRecord | CreateRecord;

/**
 * Per-file stacks of undo records, keyed by real path. Records hold only the changed bytes, so a
 * hundred levels of a large file cost little memory.
 */
export class EditHistory {
  readonly #stacks = new Map<string, EditRecord[]>();

  /** Remembers an edit of `path`. */
  push(path: string, record: EditRecord): void {
    const stack = this.#stacks.get(path) ?? [];
    stack.push(record);
    if (stack.length > MAX_UNDO_LEVELS) stack.shift();
    this.#stacks.set(path, stack);
  }

  /** The most recent edit of `path`, if any. */
  peek(path: string): EditRecord | undefined {
    const stack = this.#stacks.get(path);
    return stack?.[stack.length - 1];
  }

  /** Forgets the most recent edit of `path` (after it was undone). */
  pop(path: string): void {
    const stack = this.#stacks.get(path);
    stack?.pop();
    if (stack?.length === 0) this.#stacks.delete(path);
  }
}
