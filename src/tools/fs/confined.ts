/**
 * What both editors do before they touch a file, written once: refuse a write in a read-only
 * sandbox, resolve the path inside the workspace, keep calls on one file in order, and read a
 * file whole only when it is a regular file within the size limit, through a pinned read.
 */
import { normalize } from "node:path";
import { isReadOnly, readOnlyRefusal } from "../../policy/read_only.ts";
import { confine, OutsideWorkspaceError, UnresolvablePathError } from "../../policy/workspace.ts";
import { fail, type ToolContext, type ToolExecResult } from "../base.ts";
import { FileToolError } from "./errors.ts";
import { withFileLock } from "./lock.ts";
import { type PinnedRead, readPinned, swappedError } from "./pinned.ts";
import { formatSize } from "./size.ts";

/**
 * Runs `fn` on the real path of `path` (absolute, as the model wrote it), under the file's lock.
 * A call that `writes` is refused in a read-only sandbox before anything is looked at. A path
 * outside the workspace, and any `FileToolError` from `fn`, become the tool's failure.
 *
 * @example
 * ```ts
 * return withConfinedFile(this.context, path, command !== "view", (real) => this.#run(real));
 * ```
 */
export function withConfinedFile(
  context: ToolContext,
  path: string,
  writes: boolean,
  fn: (real: string) => Promise<ToolExecResult>,
): Promise<ToolExecResult> {
  if (writes && isReadOnly(context.settings)) {
    return Promise.resolve(fail(readOnlyRefusal(path)));
  }
  // Taking the lock on the path as written before the first await keeps calls on one file in
  // the order they were made; the lock on the real path then also serialises other spellings.
  return withFileLock(`path:${normalize(path)}`, async () => {
    try {
      const real = await confine(context.workspace, path).catch((e) => {
        throw changedWhileResolving(e) ? swappedError(path) : e;
      });
      return await withFileLock(real, () => fn(real));
    } catch (e) {
      if (
        e instanceof FileToolError || e instanceof OutsideWorkspaceError ||
        e instanceof UnresolvablePathError
      ) {
        return fail(e.message);
      }
      throw e;
    }
  });
}

/**
 * True for what resolving a path meets only when the path changes under it: a name seen as a
 * symlink that is no longer one (readlink's EINVAL), or gone, when its target is read.
 */
function changedWhileResolving(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound ||
    (e instanceof Error && (e as { code?: string }).code === "EINVAL");
}

/** How a tool words its refusals to read a file; each editor keeps its own for the model. */
export interface ReadRefusals {
  /** Nothing is at the path. */
  missing(shown: string): string;
  /** The path names a directory, device, socket or pipe (`info` says which). */
  notRegular(shown: string, info: Deno.FileInfo): string;
  /** The file is over the limit; both sizes as `formatSize` words them. */
  tooLarge(shown: string, size: string, limit: string): string;
}

/** True for the errors meaning "nothing there": not found, or a file where a directory was. */
export function isMissing(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
}

/**
 * Stats `real` (following links) and insists on a regular file; throws `FileToolError` with the
 * tool's refusal otherwise.
 */
export async function statRegular(
  real: string,
  shown: string,
  refusals: ReadRefusals,
): Promise<Deno.FileInfo> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(real);
  } catch (e) {
    if (isMissing(e)) throw new FileToolError(refusals.missing(shown));
    throw e;
  }
  if (!info.isFile) throw new FileToolError(refusals.notRegular(shown, info));
  return info;
}

/**
 * Reads the regular file at `real` whole, if it is at most `maxBytes`. The bytes and metadata
 * come from the file as opened, pinned against swapped directories (`readPinned`).
 */
export async function readConfinedFile(
  real: string,
  shown: string,
  maxBytes: number,
  refusals: ReadRefusals,
): Promise<PinnedRead> {
  const info = await statRegular(real, shown, refusals);
  if (info.size > maxBytes) {
    throw new FileToolError(
      refusals.tooLarge(shown, formatSize(info.size), formatSize(maxBytes)),
    );
  }
  return readPinned(real, shown);
}
