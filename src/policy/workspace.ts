/**
 * Workspace containment: decides whether a path may be touched. A path is allowed only when its
 * real path (every symlink resolved) lies inside the workspace root. Deno's own permission checks
 * do not follow symlinks, so every file tool asks here first.
 */
import { isAbsolute, normalize, relative, resolve, sep } from "node:path";

/** A path was refused because it leaves the workspace. */
export class OutsideWorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OutsideWorkspaceError";
  }
}

/** A path could not be resolved (a symlink loop, an unreadable directory on the way). */
export class UnresolvablePathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnresolvablePathError";
  }
}

// Linux gives up after 40 links (ELOOP); so do we.
const MAX_LINKS = 40;

/** True when `real` is `root` or lies below it. Both must be absolute and normalised. */
export function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  const rel = relative(root, real);
  // `..foo` is a child named "..foo"; only `..` itself or `../…` climbs out.
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
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
 * path to operate on. Symlinks and `..` are resolved the way the kernel does (a `..` after a
 * symlink climbs from the link's target). A path that does not exist yet (for `create`) is judged
 * by its nearest existing parent; a dangling symlink by where its target would be created.
 *
 * Throws `OutsideWorkspaceError` when the result leaves the workspace, and
 * `UnresolvablePathError` for symlink loops.
 *
 * @example
 * ```ts
 * const real = await confine("/repo", "/repo/src/main.ts"); // "/repo/src/main.ts"
 * await confine("/repo", "/repo/../etc/passwd"); // throws OutsideWorkspaceError
 * ```
 */
export async function confine(root: string, path: string): Promise<string> {
  const absolute = isAbsolute(path) ? path : resolve(root, path);
  let real: string;
  try {
    real = await resolveReal(absolute);
  } catch (e) {
    // Run with permissions scoped to the workspace, Deno itself refuses to look outside it.
    if (e instanceof Deno.errors.NotCapable) {
      throw new OutsideWorkspaceError(
        `The path ${path} leaves the workspace ${root}. Only paths inside the workspace can be ` +
          `used.`,
      );
    }
    throw e;
  }
  if (!isInside(root, real)) {
    const lexical = normalize(absolute);
    const how = isInside(root, lexical)
      ? `: it resolves to ${real} through a symbolic link`
      : real === lexical
      ? ""
      : ` (it resolves to ${real})`;
    throw new OutsideWorkspaceError(
      `The path ${path} leaves the workspace ${root}${how}. ` +
        `Only paths inside the workspace can be used.`,
    );
  }
  return real;
}

// The kernel's answer when the path exists; otherwise a component-by-component walk.
async function resolveReal(path: string): Promise<string> {
  // Under permission flags Deno folds `..` lexically before asking the kernel, so `link/..` would
  // mean different things with and without -A; walking ourselves gives the kernel's answer always.
  if (components(path).includes("..")) return await walk(path);
  try {
    return await Deno.realPath(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) && !(e instanceof Deno.errors.NotADirectory)) {
      if (isLoop(e)) throw loopError(path);
      throw e;
    }
  }
  return await walk(path);
}

// Resolves `path` one component at a time, following symlinks (dangling ones included), until a
// component is missing; the missing rest is appended as written, since it cannot contain links.
async function walk(path: string): Promise<string> {
  const queue = components(path);
  let current: string = sep;
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === ".") continue;
    if (name === "..") {
      current = parentOf(current);
      continue;
    }
    const next = current === sep ? sep + name : current + sep + name;
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(next);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
        const rest = resolve(next, ...queue);
        // A `..` in the missing part may climb back into existing (possibly linked) directories.
        return queue.includes("..") ? await walk(rest) : rest;
      }
      throw e;
    }
    if (!info.isSymlink) {
      current = next;
      continue;
    }
    if (++links > MAX_LINKS) throw loopError(path);
    const target = await Deno.readLink(next);
    if (isAbsolute(target)) current = sep;
    queue.unshift(...components(target));
  }
  return current;
}

function components(path: string): string[] {
  return path.split(sep).filter((c) => c !== "");
}

function parentOf(dir: string): string {
  const cut = dir.lastIndexOf(sep);
  return cut <= 0 ? sep : dir.slice(0, cut);
}

function isLoop(e: unknown): boolean {
  return e instanceof Error && /ELOOP|too many levels of symbolic links/i.test(e.message);
}

function loopError(path: string): UnresolvablePathError {
  return new UnresolvablePathError(
    `The path ${path} cannot be resolved: too many levels of symbolic links (a symlink loop?).`,
  );
}
