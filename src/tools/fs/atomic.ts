/**
 * Crash-safe file replacement. A file with one name gets its new content in a scratch file in the
 * same directory, flushed to disk and renamed over it: readers see the old file or the new one,
 * never a mixture, and a crash at any point leaves the old file intact (plus, at worst, a stray
 * `.deft-*.tmp` file, removed by a later write once it is a minute old).
 *
 * A file with several hard links is refused (`SharedFileError`). Rewriting it in place would
 * change every other name of it too, and those may lie outside the workspace (a link to the
 * user's `~/.bashrc`, a package store's file, a backup made with `cp -al`): an edit of a
 * workspace path would write outside. Replacing it by a rename would quietly cut this name off
 * from the others. Neither is what the user asked for, so the writer says so and writes nothing.
 *
 * Every step runs pinned to the file's directory (see `pinned.ts`), so a directory swapped for a
 * symlink after the workspace check cannot send the write elsewhere.
 *
 * The written file's mtime always lands in a later whole second than what it replaces (see
 * `laterMtime`): tools that judge a file unchanged by its size and its mtime in seconds, Python's
 * `__pycache__` first of all, would otherwise run stale results after a same-size edit made in the
 * second of the previous version.
 */
import { basename, dirname, join } from "node:path";
import { FileToolError } from "./errors.ts";
import { assertStillThere, inDirectory } from "./pinned.ts";
import { removeStaleTemps, tempName } from "./temp_names.ts";
import { refuseProtected } from "./writable.ts";

/** How the replaced file should look besides its content. */
export interface AtomicWriteOptions {
  /** Permission bits of the result; omitted = the default for new files (0o666 minus umask). */
  mode?: number;
  /** Owner to restore, when the process may (e.g. running as root on a user's file). */
  uid?: number | null;
  gid?: number | null;
  /** The file's link count when it was read: more than one is refused (`SharedFileError`). */
  links?: number | null;
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
  };
}

/**
 * The refusal to write a file that has other names (hard links): the write would change them
 * too, wherever they are.
 */
export class SharedFileError extends FileToolError {
  constructor(shown: string, links: number) {
    super(
      `${shown} has ${links} hard links (other names for the same file, which may lie outside ` +
        `the workspace); Deft does not edit a file that other paths share, because the edit ` +
        `would change them all. Nothing was written. To edit this path alone, give it its own ` +
        `copy first (in bash: \`cp -p FILE FILE.own && mv FILE.own FILE\`), then edit it again.`,
    );
    this.name = "SharedFileError";
  }
}

// Directories whose stale scratch files were already looked for in this process.
const swept = new Set<string>();

/**
 * Writes the concatenation of `parts` to `path` (a real path) crash-safely, by rename. A file that
 * had several links when it was read (`options.links`) is refused with a `SharedFileError`; the
 * rename never writes through a link that appeared since.
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
  if ((options.links ?? 1) > 1) return Promise.reject(new SharedFileError(shown, options.links!));
  try {
    inDirectory(dir, shown, (at) => {
      if (!swept.has(dir)) {
        swept.add(dir);
        removeStaleTemps(at);
      }
      const name = at + basename(path);
      const floor = Math.max(rememberedSecond(path), previousSecond(name, at));
      const bumped = replaceByRename(dir, name, at, parts, options, shown, floor);
      if (bumped !== null) ahead.set(path, bumped);
    });
    return Promise.resolve();
  } catch (e) {
    // A folder the sandbox shows read-only (~/.ssh under `-w ~`) refuses the scratch file.
    return refuseProtected(e, path, shown).then(() => Promise.reject(e));
  }
}

function replaceByRename(
  dir: string,
  name: string,
  at: string,
  parts: readonly Uint8Array[],
  options: AtomicWriteOptions,
  shown: string,
  previous: number,
): number | null {
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
    const bumped = laterMtime(file, previous);
    file.syncDataSync();
    file.close();
    closed = true;
    // The scratch file must be in the checked folder before it replaces the target there.
    assertStillThere(dir, temp, ino, shown);
    // A swap between these checks and the rename is the window Deno's path-only API leaves; the
    // tool worker's permissions (the workspace only) are the fence behind it.
    Deno.renameSync(temp, name);
    return bumped;
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

/**
 * Paths this process gave an mtime ahead of the clock, with that whole second. A file deleted and
 * made again under the same name (`rm a.py` in the shell, then `create`) no longer shows the mtime
 * a `.pyc` may be keyed to; the directory's mtime, set by the deletion, is no earlier than any
 * mtime that was not in the future, and this covers the future ones Deft set itself. An entry
 * goes once the clock is past it (with a second's margin: file times come from a coarser clock).
 */
const ahead = new Map<string, number>();

function rememberedSecond(path: string): number {
  const now = Math.floor(Date.now() / 1000);
  for (const [p, second] of ahead) if (second < now - 1) ahead.delete(p);
  return ahead.get(path) ?? -Infinity;
}

/**
 * The whole second (Unix time) of the replaced file's mtime, or for a new file its directory's,
 * read before the write touches the directory.
 */
function previousSecond(name: string, at: string): number {
  try {
    return wholeSecond(Deno.lstatSync(name).mtime);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return wholeSecond(Deno.lstatSync(at === "" ? "." : at).mtime);
}

function wholeSecond(time: Date | null): number {
  return time === null ? -Infinity : Math.floor(time.getTime() / 1000);
}

/**
 * Moves the mtime of the just-written `file` to `previous + 1` s when the clock left it in the
 * same whole second as what it replaces, or earlier; returns that second, or null when the clock's
 * mtime was kept. Python (and any tool keyed on size and seconds, like rsync's quick check) then
 * sees a change even when the edit kept the size and came within the second.
 *
 * Later rather than merely different: a clock that is behind (an mtime in the future) must not
 * make an edit look older than what it replaced, which sends `make` and other tools that compare
 * ages the wrong way, and two quick edits must not return to a second an older `.pyc` was keyed
 * to. The cost: each edit that comes within its file's second puts the mtime one second further
 * ahead of the clock, until the clock catches up; a future mtime already there moves one second
 * on. Only the file Deft wrote changes; caches such as `__pycache__` belong to the tools that made
 * them and are left alone.
 */
function laterMtime(file: Deno.FsFile, previous: number): number | null {
  const info = file.statSync();
  if (!Number.isFinite(previous) || wholeSecond(info.mtime) > previous) return null;
  file.utimeSync(info.atime ?? new Date(), new Date((previous + 1) * 1000));
  return previous + 1;
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
