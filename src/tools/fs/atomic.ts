/**
 * Atomic file replacement: the new content goes to a temporary file in the same directory, is
 * flushed to disk, and is renamed over the target. Readers see the old file or the new one, never
 * a mixture, and a crash at any point leaves the old file intact (plus, at worst, a stray hidden
 * temporary file, which the next write to that folder removes; see temp_files.ts).
 */
import { basename, dirname, join } from "node:path";
import { sweepStaleTemps, tempName } from "./temp_files.ts";

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
  const dir = dirname(path);
  await sweepStaleTemps(dir);
  const temp = join(dir, tempName(basename(path)));
  // A new file gets 0o666 minus the umask, like any other program's; a replaced one its old mode.
  const file = await Deno.open(temp, { write: true, createNew: true, mode: 0o666 });
  let closed = false;
  try {
    // Held until the file is closed (or this process dies): a sweep leaves a locked file alone.
    await file.lock(true);
    for (const part of parts) await writeAll(file, part);
    if (options.uid != null && options.gid != null) await restoreOwner(temp, options);
    // chmod after chown: changing the owner may clear setuid/setgid bits.
    if (options.mode !== undefined) await Deno.chmod(temp, options.mode);
    await file.syncData();
    file.close();
    closed = true;
    await Deno.rename(temp, path);
  } catch (e) {
    if (!closed) file.close();
    await Deno.remove(temp).catch(() => {});
    throw e;
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
