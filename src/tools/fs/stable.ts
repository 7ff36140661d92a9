/**
 * Guards against a path changing meaning while a file tool uses it. A process in the workspace can
 * swap a folder for a symlink to somewhere outside between the containment check and the read or
 * write. Deno has no `openat` or `O_NOFOLLOW` for folders, so the check is repeated after opening:
 * the opened file must be the very file (same device and inode) that the real path names now, and
 * the real path must still resolve to itself. A swap before the open is caught by the identity,
 * a swap back afterwards (to hide it) too.
 */
import { dirname } from "node:path";
import { FileToolError } from "./errors.ts";

/** The path changed under a tool; nothing was read from or written to the wrong place. */
export class PathChangedError extends FileToolError {
  constructor(path: string) {
    super(
      `The path ${path} changed while it was being used (a folder on the way was replaced, for ` +
        `example by a symlink), so the operation was stopped. Check the folder and try again.`,
    );
    this.name = "PathChangedError";
  }
}

/**
 * Throws `PathChangedError` unless `real` is still a symlink-free path to the file `opened`. Each
 * look is a separate system call, so a swapper could flip the folder back and forth in step with
 * them; the looks are therefore interleaved several times, which such a swapper cannot match by
 * chance (with a sandbox, no swapper can reach outside anyway).
 */
export async function assertSameFile(real: string, opened: Deno.FileInfo): Promise<void> {
  for (let round = 0; round < CHECK_ROUNDS; round++) {
    let current: Deno.FileInfo;
    let resolved: string;
    try {
      resolved = await Deno.realPath(real);
      current = await Deno.lstat(real);
    } catch {
      throw new PathChangedError(real);
    }
    if (resolved !== real || current.ino !== opened.ino || current.dev !== opened.dev) {
      throw new PathChangedError(real);
    }
  }
  // One more resolution after the last identity check closes the pair.
  const last = await Deno.realPath(real).catch(() => undefined);
  if (last !== real) throw new PathChangedError(real);
}

const CHECK_ROUNDS = 3;

/**
 * Reads the whole file at `real` (a path from `confine`) through one handle, after checking that
 * the handle is the file the path names. Throws `PathChangedError` when it is not.
 *
 * @example
 * ```ts
 * const bytes = await readStable(await confine(root, "/repo/a.txt"));
 * ```
 */
export async function readStable(real: string): Promise<Uint8Array> {
  const file = await Deno.open(real, { read: true });
  try {
    await assertSameFile(real, await file.stat());
    const chunks: Uint8Array[] = [];
    let total = 0;
    const buffer = new Uint8Array(64 * 1024);
    while (true) {
      const n = await file.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
      total += n;
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    return bytes;
  } finally {
    file.close();
  }
}

/** Throws `PathChangedError` unless the folder of `real` still resolves to itself. */
export async function assertSameFolder(real: string): Promise<void> {
  const folder = dirname(real);
  let resolved: string;
  try {
    resolved = await Deno.realPath(folder);
  } catch {
    throw new PathChangedError(real);
  }
  if (resolved !== folder) throw new PathChangedError(real);
}
