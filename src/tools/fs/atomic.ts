/**
 * Atomic file replacement: the new content goes to a temporary file in the same directory, is
 * flushed to disk, and is renamed over the target. Readers see the old file or the new one, never
 * a mixture, and a crash at any point leaves the old file intact (plus, at worst, a stray hidden
 * temporary file). A folder swapped for a symlink meanwhile stops the write (see stable.ts).
 */
import { basename, dirname, join } from "node:path";
import { assertSameFile, assertSameFolder } from "./stable.ts";

/** How the replaced file should look besides its content. */
export interface AtomicWriteOptions {
  /** Permission bits of the result; omitted = the default for new files (0o666 minus umask). */
  mode?: number;
  /** Owner to restore, when the process may (e.g. running as root on a user's file). */
  uid?: number | null;
  gid?: number | null;
}

/** Options that keep an existing file's permission bits and owner. */
export function preserving(info: Deno.FileInfo): AtomicWriteOptions {
  return {
    mode: info.mode === null ? undefined : info.mode & 0o7777,
    uid: info.uid,
    gid: info.gid,
  };
}

/**
 * Writes the concatenation of `parts` to `path` atomically. `path` must be a real path (no
 * symlink as its last component is followed: the rename replaces whatever is at `path`).
 *
 * @example
 * ```ts
 * const old = await Deno.readFile("/repo/a.txt");
 * await writeFileAtomic("/repo/a.txt", [old.subarray(0, 10), new TextEncoder().encode("x")], {
 *   mode: (await Deno.stat("/repo/a.txt")).mode! & 0o7777,
 * });
 * ```
 */
export async function writeFileAtomic(
  path: string,
  parts: readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  // Names are capped at 255 bytes; a long file name must still leave room for the suffix.
  const temp = join(dirname(path), `.${basename(path).slice(0, 100)}.deft-${randomSuffix()}.tmp`);
  // A new file gets 0o666 minus the umask, like any other program's; a replaced one its old mode.
  await assertSameFolder(path);
  const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o666 });
  let closed = false;
  let made: Deno.FileInfo | undefined;
  try {
    // The folder may have been swapped for a symlink since the caller's check: write nothing
    // unless the new file is where it should be, and check again right before the rename.
    made = await file.stat();
    await assertSameFile(temp, made);
    for (const part of parts) await writeAll(file, part);
    if (options.uid != null && options.gid != null) await restoreOwner(temp, options);
    // chmod after chown: changing the owner may clear setuid/setgid bits.
    if (options.mode !== undefined) await Deno.chmod(temp, options.mode);
    await file.syncData();
    file.close();
    closed = true;
    await assertSameFile(temp, made);
    await Deno.rename(temp, path);
  } catch (e) {
    if (!closed) file.close();
    await removeOwn(temp, made);
    throw e;
  }
}

/**
 * Removes `temp` only while it still names the file we made (never someone else's file). When a
 * swapped folder sent it elsewhere, the path may lead there again a moment later: try a while.
 */
async function removeOwn(temp: string, made: Deno.FileInfo | undefined): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      const now = await Deno.lstat(temp);
      if (!made || (now.ino === made.ino && now.dev === made.dev)) {
        await Deno.remove(temp);
        return;
      }
    } catch {
      // Not there (now): gone already, or the folder points elsewhere at the moment.
      if (!made) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

async function restoreOwner(temp: string, options: AtomicWriteOptions): Promise<void> {
  try {
    await Deno.chown(temp, options.uid!, options.gid!);
  } catch {
    // Only a privileged process can give a file away; everyone else keeps their own ownership.
  }
}

function randomSuffix(): string {
  return crypto.randomUUID().slice(0, 8);
}
