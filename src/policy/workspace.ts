/**
 * Workspace containment: decides whether a path may be touched. A path is allowed only when its
 * real path (every symlink resolved) lies inside the workspace root. Deno's own permission checks
 * do not follow symlinks, so every file tool asks here first.
 */
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A path was refused because it leaves the workspace (or cannot be resolved safely). */
export class OutsideWorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutsideWorkspaceError";
  }
}

/** True when `real` is `root` or lies below it. Both must be absolute and normalised. */
export function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  const rel = relative(root, real);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) && !rel.startsWith(sep);
}

/** The real path of a workspace directory; throws a clear error when it is missing. */
export async function realWorkspace(dir: string): Promise<string> {
  let real: string;
  try {
    real = await Deno.realPath(resolve(dir));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new Error(`The workspace ${resolve(dir)} does not exist.`);
    }
    throw e;
  }
  const info = await Deno.stat(real);
  if (!info.isDirectory) throw new Error(`The workspace ${real} is not a directory.`);
  return real;
}

/**
 * Resolves absolute `path` against the workspace `root` (itself a real path) and returns the real
 * path to operate on. A path that does not exist yet (for `create`) is judged by its nearest
 * existing parent. Throws `OutsideWorkspaceError` when the result leaves the workspace, or when
 * the path is a dangling symlink (its target could be created anywhere).
 */
export async function confine(root: string, path: string): Promise<string> {
  const wanted = resolve(path);
  const real = await realOrNearest(wanted);
  if (!isInside(root, real)) {
    const how = real === wanted ? "" : ` (it resolves to ${real})`;
    throw new OutsideWorkspaceError(
      `The path ${path} is outside the workspace ${root}${how}. ` +
        `Only files inside the workspace can be used.`,
    );
  }
  return real;
}

async function realOrNearest(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  if (await isDanglingLink(path)) {
    throw new OutsideWorkspaceError(
      `The path ${path} is a symbolic link to a missing target; refusing to follow it.`,
    );
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realOrNearest(parent), path.slice(parent.length + (parent === sep ? 0 : 1)));
}

async function isDanglingLink(path: string): Promise<boolean> {
  try {
    return (await Deno.lstat(path)).isSymlink;
  } catch {
    return false;
  }
}
