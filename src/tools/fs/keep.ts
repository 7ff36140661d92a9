/**
 * Keeping one name of the workspace as it is and putting it back afterwards, for a step Deft takes
 * itself on the host while the model works (`/init` keeps AGENTS.md). The model and the repository
 * may have made that name anything: a symlink to a secret outside, a FIFO, a hard link. So the name
 * is only ever looked at with `lstat`, never followed; its bytes are read only when it is a regular
 * file (pinned to its folder, opened without following a link or waiting on a pipe); and it is put
 * back by renaming a new regular file (or the symlink it was) over whatever is there now, in the
 * same folder, never by writing through what is there.
 */
import { basename, dirname } from "node:path";
import { writeFileAtomic } from "./atomic.ts";
import { FileToolError } from "./errors.ts";
import { inDirectory, readPinned } from "./pinned.ts";
import { tempName } from "./temp_names.ts";

/** What a name was when it was kept. */
export type KeptFile =
  /** A regular file: its bytes and permission bits. */
  | { kind: "file"; bytes: Uint8Array; mode: number | undefined }
  /** A symbolic link: where it points (never read through). */
  | { kind: "symlink"; target: string }
  /** Something Deft does not read (a FIFO, device, socket, folder, or a file over the limit). */
  | { kind: "other"; what: string; ino: number | null; reason: string }
  /** Nothing was there. */
  | { kind: "missing" };

/** What `putBack` found and did. */
export interface PutBackOutcome {
  /** `unchanged`: nothing to do; `restored`: put back; `refused`: left as it is now (see `why`). */
  done: "unchanged" | "restored" | "refused";
  /** What was at the name before putting back: `missing`, `a symbolic link to X`, `a FIFO` … */
  found: string;
  /** For `refused`: why it was not put back. */
  why?: string;
}

/** Files larger than this are not kept (a repository could ship a huge or sparse file). */
export const MAX_KEPT_BYTES = 8 * 1024 * 1024;

/**
 * What is at `path` now (a name in a real folder: the folder is resolved, the name itself is not),
 * kept so that `putBack` can restore it: a regular file's bytes, a symlink's target, or, for
 * anything else, only what it is.
 *
 * @example
 * ```ts
 * const kept = keepFile("/repo/AGENTS.md");
 * // … the model works …
 * const outcome = putBack("/repo/AGENTS.md", kept);
 * ```
 */
export function keepFile(path: string, maxBytes = MAX_KEPT_BYTES): KeptFile {
  const info = lstatPinned(path);
  if (!info) return { kind: "missing" };
  if (info.isSymlink) return { kind: "symlink", target: readLinkPinned(path) };
  if (!info.isFile) {
    return { kind: "other", what: kindOf(info), ino: info.ino, reason: "Deft never opens one" };
  }
  if (info.size > maxBytes) {
    return {
      kind: "other",
      what: kindOf(info),
      ino: info.ino,
      reason: `it is larger than ${maxBytes} bytes, too large to keep a copy of`,
    };
  }
  try {
    const { bytes, info: opened } = readPinned(path, path);
    return { kind: "file", bytes, mode: opened.mode === null ? undefined : opened.mode & 0o7777 };
  } catch (e) {
    if (e instanceof Deno.errors.PermissionDenied) {
      return { kind: "other", what: kindOf(info), ino: info.ino, reason: "Deft may not read it" };
    }
    // Swapped for something else between the look and the read: not read, so not kept.
    if (!(e instanceof FileToolError)) throw e;
    return {
      kind: "other",
      what: "a file that changed while Deft read it",
      ino: null,
      reason: e.message,
    };
  }
}

/**
 * Puts `kept` back at `path`, replacing whatever is there now: a regular file is written anew
 * and renamed over it, a symlink made anew and renamed over it (its target neither read nor
 * written). A name that held something Deft does not read is left as it is now (`refused`), as
 * is one that was missing.
 */
export async function putBack(path: string, kept: KeptFile): Promise<PutBackOutcome> {
  const now = lstatPinned(path);
  const found = now ? describe(path, now) : "missing";
  switch (kept.kind) {
    case "missing":
      return { done: now ? "refused" : "unchanged", found, why: "there was nothing to put back" };
    case "other":
      if (now && now.ino === kept.ino && kindOf(now) === kept.what) {
        return { done: "unchanged", found };
      }
      return { done: "refused", found, why: `it was ${kept.what} and ${kept.reason}` };
    case "symlink":
      if (now?.isSymlink && readLinkPinned(path) === kept.target) {
        return { done: "unchanged", found };
      }
      return replaceWith(path, found, (temp) => Deno.symlinkSync(kept.target, temp));
    case "file":
      if (now?.isFile && sameFile(path, kept)) return { done: "unchanged", found };
      try {
        // No `links`: whatever is there now is replaced by rename, never written through.
        await writeFileAtomic(path, [kept.bytes], { mode: kept.mode, shown: basename(path) });
        return { done: "restored", found };
      } catch (e) {
        return { done: "refused", found, why: (e as Error).message };
      }
  }
}

/** `lstat` of `path`'s name inside its pinned folder; undefined when nothing is there. */
function lstatPinned(path: string): Deno.FileInfo | undefined {
  return inDirectory(dirname(path), path, (at) => {
    try {
      return Deno.lstatSync(at + basename(path));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
  });
}

function readLinkPinned(path: string): string {
  return inDirectory(dirname(path), path, (at) => Deno.readLinkSync(at + basename(path)));
}

/** True when the regular file at `path` holds `kept`'s bytes and mode (read pinned, not followed). */
function sameFile(path: string, kept: { bytes: Uint8Array; mode: number | undefined }): boolean {
  try {
    const { bytes, info } = readPinned(path, path);
    const mode = info.mode === null ? undefined : info.mode & 0o7777;
    return mode === kept.mode && bytes.length === kept.bytes.length &&
      bytes.every((b, i) => b === kept.bytes[i]);
  } catch {
    // Unreadable now (made unreadable, or swapped): not the kept file.
    return false;
  }
}

/** Makes something under a scratch name in `path`'s folder (`make`) and renames it over `path`. */
function replaceWith(
  path: string,
  found: string,
  make: (temp: string) => void,
): PutBackOutcome {
  try {
    inDirectory(dirname(path), path, (at) => {
      const temp = at + tempName("tmp");
      make(temp);
      try {
        Deno.renameSync(temp, at + basename(path));
      } catch (e) {
        Deno.removeSync(temp);
        throw e;
      }
    });
    return { done: "restored", found };
  } catch (e) {
    return { done: "refused", found, why: (e as Error).message };
  }
}

/** What `info` is, in words: `a FIFO`, `a folder` … */
export function kindOf(info: Deno.FileInfo): string {
  if (info.isFile) {
    return (info.nlink ?? 1) > 1 ? "a regular file with several hard links" : "a regular file";
  }
  if (info.isDirectory) return "a folder";
  if (info.isSymlink) return "a symbolic link";
  if (info.isFifo) return "a FIFO (named pipe)";
  if (info.isSocket) return "a socket";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  return "a special file";
}

function describe(path: string, info: Deno.FileInfo): string {
  return info.isSymlink ? `a symbolic link to ${readLinkPinned(path)}` : kindOf(info);
}

/**
 * What is at `path` now, in words (`missing`, `a regular file`, `a symbolic link to X`, `a FIFO
 * (named pipe)` …), looked at without following it.
 */
export function whatIsAt(path: string): string {
  const info = lstatPinned(path);
  return info ? describe(path, info) : "missing";
}
