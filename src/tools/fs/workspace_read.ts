/**
 * Deft's own reads of a file the model names, outside any tool: the approval question's preview
 * of an edit and the console's diff of one. These run in Deft's main process, which may read more
 * than the tools may, and what they read reaches the terminal; so they read only what the editor
 * itself could: a regular file whose real path is inside the workspace, opened pinned to its
 * folder without following a link (fs/pinned.ts), never a FIFO or a device (which could hold the
 * read forever).
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { isInside } from "../../policy/workspace.ts";
import { confirmPinned, openPinned } from "./pinned.ts";

/**
 * The bytes of the file at `path` (absolute, or relative to `workspace`); null when there is no
 * file there (a file the edit would create), judged inside the workspace; undefined when it may
 * not or cannot be read: outside the workspace (as written or through a link), not a regular
 * file, larger than `maxBytes`, or changed while it was read.
 *
 * @example
 * ```ts
 * const before = readWorkspaceFile("/repo", "src/main.ts", 1024 * 1024);
 * ```
 */
export function readWorkspaceFile(
  workspace: string,
  path: string,
  maxBytes: number,
): Uint8Array | null | undefined {
  if (path === "" || workspace === "") return undefined;
  let root: string;
  try {
    root = Deno.realPathSync(workspace);
  } catch {
    return undefined;
  }
  const real = realPathOf(isAbsolute(path) ? resolve(path) : resolve(root, path));
  if (real === undefined || real === root || !isInside(root, real)) return undefined;
  try {
    Deno.lstatSync(real);
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? null : undefined;
  }
  try {
    const { file, info } = openPinned(real, path);
    const bytes = new Uint8Array(Math.min(info.size, maxBytes) + 1);
    let read = 0;
    try {
      while (read < bytes.length) {
        const n = file.readSync(bytes.subarray(read));
        if (n === null || n === 0) break;
        read += n;
      }
    } finally {
      file.close();
    }
    confirmPinned(real, path, info.ino);
    // More than the limit, or not the size it had when opened (it grew or shrank meanwhile):
    // refused, never returned cut.
    return read > maxBytes || read !== info.size ? undefined : bytes.slice(0, read);
  } catch {
    return undefined;
  }
}

/** `path` with its longest existing part resolved through links; undefined on a link loop. */
function realPathOf(path: string): string | undefined {
  const rest: string[] = [];
  for (let head = path;; head = dirname(head)) {
    try {
      return join(Deno.realPathSync(head), ...rest);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) && !(e instanceof Deno.errors.NotADirectory)) {
        return undefined;
      }
      if (head === dirname(head)) return undefined;
      rest.unshift(basename(head));
    }
  }
}
