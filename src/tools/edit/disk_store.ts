/**
 * The editor's files on disk: reads pinned to the folder that was checked (a folder swapped for
 * a link mid-call reaches nothing, a FIFO is never waited on), replacements atomic by rename with
 * the file's mode, owner and links kept (src/tools/fs).
 */
import { preserving, writeFileAtomic } from "../fs/atomic.ts";
import { isMissing } from "../fs/confined.ts";
import { confirmPinned, openPinned, readPinned, removePinned } from "../fs/pinned.ts";
import { assertWritable } from "../fs/writable.ts";
import type { FileStore, FileTree } from "./store.ts";

const tree: FileTree = {
  async exists(path) {
    try {
      await Deno.lstat(path);
      return true;
    } catch (e) {
      if (isMissing(e)) return false;
      throw e;
    }
  },
  makeDir: (path) => Deno.mkdir(path),
  removeEmptyDir: (dir) => Deno.remove(dir).catch(() => {}),
  create: (real, shown, content) => writeFileAtomic(real, [content], { shown }),
  remove: (real, shown, info) => settled(() => removePinned(real, shown, info.ino)),
  list: (dir) => Deno.readDir(dir),
};

/** The disk, as the editor reads and writes it. */
export const DISK_STORE: FileStore = {
  stat: (real) => Deno.stat(real),
  read: (real, shown) => settled(() => readPinned(real, shown)),
  open: (real, shown) =>
    settled(() => {
      const { file, info } = openPinned(real, shown);
      return { file, info, confirm: () => confirmPinned(real, shown, info.ino) };
    }),
  checkWritable: assertWritable,
  write: (real, shown, parts, was) => writeFileAtomic(real, parts, { ...preserving(was), shown }),
  tree,
};

/** `fn`'s value, or its throw, as a promise. */
function settled<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e);
  }
}
