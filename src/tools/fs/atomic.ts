/**
 * Crash-safe file replacement. A file with one name gets its new content in a scratch file in the
 * same directory, flushed to disk and renamed over it: readers see the old file or the new one,
 * never a mixture, and a crash at any point leaves the old file intact (plus, at worst, a stray
 * `.deft-*.tmp` file, removed by a later write once it is a minute old).
 *
 * A file with several hard links cannot be replaced by a rename without cutting it off from its
 * other names, so it is rewritten in place, keeping its inode, and with it every link, its mode and
 * its owner. Its old content is first copied to a `.deft-*.bak` file beside it and flushed; only
 * then is the file overwritten, flushed and the copy removed. A crash mid-write leaves that copy,
 * the complete old content, to restore from; it is never removed automatically.
 *
 * Every step runs pinned to the file's directory (see `pinned.ts`), so a directory swapped for a
 * symlink after the workspace check cannot send the write elsewhere.
 */
import { basename, dirname, join } from "node:path";
import { assertStillThere, inDirectory, swappedError } from "./pinned.ts";
import { removeStaleTemps, tempName } from "./temp_names.ts";

/** How the replaced file should look besides its content. */
export interface AtomicWriteOptions {
  /** Permission bits of the result; omitted = the default for new files (0o666 minus umask). */
  mode?: number;
  /** Owner to restore, when the process may (e.g. running as root on a user's file). */
  uid?: number | null;
  gid?: number | null;
  /** The file's identity and link count when it was read: more than one link = rewrite in place. */
  links?: number | null;
  ino?: number | null;
  /** The path as the model wrote it, for messages. */
  shown?: string;
}

/** Options that keep an existing file's permission bits, owner and hard links. */
export function preserving(info: Deno.FileInfo): AtomicWriteOptions {
  return {
    mode: info.mode === null ? undefined : info.mode & 0o7777,
    uid: info.uid,
    gid: info.gid,
    links: info.nlink,
    ino: info.ino,
  };
}

// Directories whose stale scratch files were already looked for in this process.
const swept = new Set<string>();

/**
 * Writes the concatenation of `parts` to `path` (a real path) crash-safely: by rename for a file
 * with one link, in place with a backup for a file with several (`options.links`).
 *
 * @example
 * ```ts
 * const old = await Deno.readFile("/repo/a.txt");
 * await writeFileAtomic("/repo/a.txt", [old.subarray(0, 10), new TextEncoder().encode("x")], {
 *   mode: (await Deno.stat("/repo/a.txt")).mode! & 0o7777,
 * });
 * ```
 */
export function writeFileAtomic(
  path: string,
  parts: readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  const shown = options.shown ?? path;
  try {
    inDirectory(dir, shown, (at) => {
      if (!swept.has(dir)) {
        swept.add(dir);
        removeStaleTemps(at);
      }
      const name = at + basename(path);
      if ((options.links ?? 1) > 1) rewriteInPlace(dir, name, at, parts, options, shown);
      else replaceByRename(dir, name, at, parts, options, shown);
    });
    return Promise.resolve();
  } catch (e) {
    return Promise.reject(e);
  }
}

function replaceByRename(
  dir: string,
  name: string,
  at: string,
  parts: readonly Uint8Array[],
  options: AtomicWriteOptions,
  shown: string,
): void {
  const temp = at + tempName("tmp");
  // A new file gets 0o666 minus the umask, like any other program's; a replaced one its old mode.
  const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o666 });
  let closed = false;
  let ino: number | null = null;
  try {
    ino = file.statSync().ino;
    for (const part of parts) writeAll(file, part);
    if (options.uid != null && options.gid != null) restoreOwner(temp, options);
    // chmod after chown: changing the owner may clear setuid/setgid bits.
    if (options.mode !== undefined) Deno.chmodSync(temp, options.mode);
    file.syncDataSync();
    file.close();
    closed = true;
    // The scratch file must be in the checked folder before it replaces the target there.
    assertStillThere(dir, temp, ino, shown);
    // A swap between these checks and the rename is the window Deno's path-only API leaves; the
    // tool worker's permissions (the workspace only) are the fence behind it.
    Deno.renameSync(temp, name);
  } catch (e) {
    if (!closed) file.close();
    if (ino !== null) removeStray(dir, temp, ino);
    throw e;
  }
}

/**
 * Removes the scratch file with inode `ino`. A swapped-in symlink may have put it elsewhere, so it
 * is looked for where the folder resolves now, sampled a number of times, and removed only where
 * it is ours; a file of someone else's is never touched.
 */
function removeStray(dir: string, temp: string, ino: number): void {
  const places = new Set([dir]);
  for (let i = 0; i < 20; i++) {
    try {
      places.add(Deno.realPathSync(dir));
    } catch {
      // Gone for a moment; the other samples may find it.
    }
  }
  for (const place of places) {
    const path = join(place, basename(temp));
    try {
      if (Deno.lstatSync(path).ino === ino) Deno.removeSync(path);
    } catch {
      // Not there, or already renamed into place.
    }
  }
}

function rewriteInPlace(
  dir: string,
  name: string,
  at: string,
  parts: readonly Uint8Array[],
  options: AtomicWriteOptions,
  shown: string,
): void {
  const file = Deno.openSync(name, { read: true, write: true });
  try {
    const info = file.statSync();
    // The name must still be the file that was read (not a file put there since).
    if (!info.isFile || (options.ino != null && info.ino !== options.ino)) {
      throw swappedError(shown);
    }
    assertStillThere(dir, name, info.ino, shown);
    const old = new Uint8Array(info.size);
    let read = 0;
    while (read < old.length) {
      const n = file.readSync(old.subarray(read));
      if (n === null || n === 0) break;
      read += n;
    }
    const backup = at + tempName("bak");
    const copy = Deno.openSync(backup, { write: true, createNew: true, mode: 0o600 });
    try {
      writeAll(copy, old.subarray(0, read));
      copy.syncDataSync();
    } catch (e) {
      copy.close();
      Deno.removeSync(backup);
      throw e;
    }
    copy.close();
    try {
      overwrite(file, parts);
    } catch (e) {
      // Put the old content back; if even that fails, the backup stays for the user.
      overwrite(file, [old.subarray(0, read)]);
      Deno.removeSync(backup);
      throw e;
    }
    Deno.removeSync(backup);
  } finally {
    file.close();
  }
}

function overwrite(file: Deno.FsFile, parts: readonly Uint8Array[]): void {
  file.seekSync(0, Deno.SeekMode.Start);
  let total = 0;
  for (const part of parts) {
    writeAll(file, part);
    total += part.length;
  }
  file.truncateSync(total);
  file.syncDataSync();
}

function writeAll(file: Deno.FsFile, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}

function restoreOwner(temp: string, options: AtomicWriteOptions): void {
  try {
    Deno.chownSync(temp, options.uid!, options.gid!);
  } catch {
    // Only a privileged process can give a file away; everyone else keeps their own ownership.
  }
}
