/**
 * Closes the race between the workspace check and the file operation. `confine` resolves a path
 * to its real location, but a directory on the way can be swapped for a symlink to outside before
 * the file is opened. Here the process first changes into the file's directory and asks the kernel
 * where it landed (`getcwd` names the directory itself, not the path used to get there); only if
 * that is the directory that was checked does the operation run, on the bare file name, relative
 * to that directory. Swapping any directory of the path afterwards no longer matters. The
 * operation runs synchronously, so no other code of this thread sees the changed directory, and
 * the previous working directory is restored at once.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import { FileToolError } from "./errors.ts";

/**
 * Runs `fn` with the working directory pinned to `dir` (a real path). `fn` gets the prefix to put
 * before names in that directory: `""` when pinned. Where this process may not return to its
 * working directory (permissions), nothing is pinned and the prefix is `dir/`; the caller's checks
 * after opening still apply.
 *
 * @example
 * ```ts
 * const bytes = inDirectory("/repo/src", (at) => Deno.readFileSync(`${at}main.ts`));
 * ```
 */
export function inDirectory<T>(dir: string, shown: string, fn: (at: string) => T): T {
  const home = Deno.cwd();
  if (Deno.permissions.querySync({ name: "read", path: home }).state !== "granted") {
    return fn(dir.endsWith("/") ? dir : `${dir}/`);
  }
  try {
    Deno.chdir(dir);
  } catch (e) {
    // The directory checked a moment ago is gone or no longer a directory.
    if (e instanceof Deno.errors.NotFound) throw swappedError(shown);
    throw e;
  }
  try {
    if (Deno.cwd() !== dir) throw swappedError(shown);
    return fn("");
  } finally {
    Deno.chdir(home);
  }
}

/** What was read, and the file's metadata as the opened file saw it. */
export interface PinnedRead {
  bytes: Uint8Array;
  info: Deno.FileInfo;
}

/**
 * Reads the regular file at real path `real` without following a symlink or a swapped directory
 * out of it. A path that is not a regular file (a FIFO, a device) is refused before it is opened,
 * and one swapped in after that check is opened without waiting and refused, so the read cannot
 * block.
 */
export function readPinned(real: string, shown: string): PinnedRead {
  const { file, info } = openPinned(real, shown);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(info.size);
    let read = 0;
    while (read < bytes.length) {
      const n = file.readSync(bytes.subarray(read));
      if (n === null || n === 0) break;
      read += n;
    }
    if (read < bytes.length) bytes = bytes.slice(0, read);
  } finally {
    file.close();
  }
  confirmPinned(real, shown, info.ino);
  return { bytes, info };
}

/** An open regular file, read in steps; `null` at its end. */
export interface PinnedHandle {
  readSync(buffer: Uint8Array): number | null;
  read(buffer: Uint8Array): Promise<number | null>;
  close(): void;
}

/** A file opened by `openPinned`, and its metadata as the opened file sees it. */
export interface PinnedFile {
  file: PinnedHandle;
  info: Deno.FileInfo;
}

/**
 * Opens the regular file at real path `real` for reading, pinned like `readPinned`, for a caller
 * that reads it in steps (a streamed view). The caller closes the file, then calls
 * `confirmPinned` before it uses what it read.
 */
export function openPinned(real: string, shown: string): PinnedFile {
  return inDirectory(dirname(real), shown, (at) => {
    const name = at + basename(real);
    let before: Deno.FileInfo;
    try {
      before = Deno.lstatSync(name);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
        throw new FileToolError(`The path ${shown} does not exist. Please provide a valid path.`);
      }
      throw e;
    }
    if (before.isSymlink) throw swappedError(shown);
    if (!before.isFile) throw notRegular(shown);
    const fd = openNonBlocking(name, shown);
    try {
      const info = fileInfo(fstatSync(fd));
      if (!info.isFile || info.ino !== before.ino || info.dev !== before.dev) {
        throw swappedError(shown);
      }
      assertStillThere(dirname(real), name, info.ino, shown);
      return { file: handleOf(fd), info };
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  });
}

/**
 * Opens `name` for reading without ever waiting. A FIFO (or a device) swapped in between the
 * check and the open would make a plain open wait for a writer, holding the tool host's thread,
 * and every call behind it, until the call's deadline; with `O_NONBLOCK` it opens at once and
 * the caller refuses it by its type. On a regular file the flag changes nothing. `O_NOFOLLOW`
 * refuses a symlink swapped in as the last part (where Deno does not resolve the path first).
 */
function openNonBlocking(name: string, shown: string): number {
  try {
    return openSync(name, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || code === "ENXIO") {
      throw swappedError(shown);
    }
    throw e;
  }
}

function handleOf(fd: number): PinnedHandle {
  const readSyncAt = (buffer: Uint8Array): number | null => {
    if (buffer.length === 0) return 0;
    const n = readSync(fd, buffer, 0, buffer.length, null);
    return n === 0 ? null : n;
  };
  return {
    readSync: readSyncAt,
    read: (buffer) => Promise.resolve(readSyncAt(buffer)),
    close: () => closeSync(fd),
  };
}

/** Node's `Stats` of an open file as the `Deno.FileInfo` the editors use. */
function fileInfo(s: Stats): Deno.FileInfo {
  return {
    isFile: s.isFile(),
    isDirectory: s.isDirectory(),
    isSymlink: s.isSymbolicLink(),
    isBlockDevice: s.isBlockDevice(),
    isCharDevice: s.isCharacterDevice(),
    isFifo: s.isFIFO(),
    isSocket: s.isSocket(),
    size: s.size,
    mtime: s.mtime,
    atime: s.atime,
    birthtime: s.birthtime,
    ctime: s.ctime,
    dev: s.dev,
    ino: s.ino,
    mode: s.mode,
    nlink: s.nlink,
    uid: s.uid,
    gid: s.gid,
    rdev: s.rdev,
    blksize: s.blksize,
    blocks: s.blocks,
  };
}

/**
 * The check after a pinned read: `real` still names the file with inode `ino`, so a swap back
 * (to hide a read from elsewhere) is caught too.
 */
export function confirmPinned(real: string, shown: string, ino: number | null): void {
  inDirectory(dirname(real), shown, (at) => {
    assertStillThere(dirname(real), at + basename(real), ino, shown, 1);
  });
}

/**
 * Removes the regular file at real path `real`, pinned like `readPinned`, and only if it is still
 * the file with inode `ino` (the one the caller read and checked).
 */
export function removePinned(real: string, shown: string, ino: number | null): void {
  inDirectory(dirname(real), shown, (at) => {
    const name = at + basename(real);
    const info = Deno.lstatSync(name);
    if (!info.isFile || (ino !== null && info.ino !== ino)) throw swappedError(shown);
    assertStillThere(dirname(real), name, info.ino, shown);
    Deno.removeSync(name);
  });
}

/**
 * Throws `swappedError` unless `dir` still resolves to itself and `name` (from `inDirectory`) is
 * still the file with inode `ino`, looked at several times in turn.
 *
 * Pinning to the folder holds when Deno opens a relative name from the process's directory. Under
 * permission flags (how the tool worker runs) Deno first turns a relative name into an absolute
 * one from the directory's path, which a swapped-in symlink redirects, so the identity of what
 * was opened is checked against what the path names now. A swapper would have to flip the folder
 * in step with each of these separate looks.
 */
export function assertStillThere(
  dir: string,
  name: string,
  ino: number | null,
  shown: string,
  rounds = CHECK_ROUNDS,
): void {
  for (let round = 0; round < rounds; round++) {
    let resolved: string;
    let info: Deno.FileInfo;
    try {
      resolved = Deno.realPathSync(dir);
      info = Deno.lstatSync(name);
    } catch {
      throw swappedError(shown);
    }
    if (resolved !== dir || !info.isFile || (ino !== null && info.ino !== ino)) {
      throw swappedError(shown);
    }
  }
}

const CHECK_ROUNDS = 3;

/** The refusal when a path changed under the editor between its check and its use. */
export function swappedError(shown: string): FileToolError {
  return new FileToolError(
    `The path ${shown} changed while the editor was using it (a directory or the file was ` +
      `replaced, e.g. by a symbolic link); nothing was read or written. Check the path and try ` +
      `again.`,
  );
}

function notRegular(shown: string): FileToolError {
  return new FileToolError(
    `The path ${shown} is not a regular file (a device, socket or pipe); the editor only works ` +
      `on regular files.`,
  );
}
