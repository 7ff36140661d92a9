/**
 * Workspace containment: decides whether a path may be touched. A path is allowed only when its
 * real path (every symlink resolved) lies inside the workspace root. Deno's own permission checks
 * do not follow symlinks, so every file tool asks here first.
 */
import { isAbsolute, normalize, relative, resolve, sep } from "./paths.ts";
import { missingGrant } from "./grants.ts";

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

/**
 * Deno's permissions, as Deft was started, do not cover a path the job needs (never an escape:
 * the path is inside the workspace). The message names the flag to add.
 */
export class PermissionMissingError extends UnresolvablePathError {
  constructor(message: string) {
    super(message);
    this.name = "PermissionMissingError";
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
  const real = await resolveReal(root, absolute, path);
  if (!isInside(root, real)) throw escape(root, path, absolute, real);
  return real;
}

function escape(root: string, path: string, absolute: string, real: string) {
  const lexical = normalize(absolute);
  const how = isInside(root, lexical)
    ? `: it resolves to ${real} through a symbolic link`
    : real === lexical
    ? ""
    : ` (it resolves to ${real})`;
  return new OutsideWorkspaceError(
    `The path ${path} leaves the workspace ${root}${how}. ` +
      `Only paths inside the workspace can be used.`,
  );
}

// The kernel's answer when the path exists; otherwise a component-by-component walk.
async function resolveReal(root: string, absolute: string, path: string): Promise<string> {
  // Under permission flags Deno folds `..` lexically before asking the kernel, so `link/..` would
  // mean different things with and without -A; walking ourselves gives the kernel's answer always.
  if (!components(absolute).includes("..")) {
    try {
      return await Deno.realPath(absolute);
    } catch (e) {
      if (isLoop(e)) throw loopError(path);
      // Missing (a file to create), or Deno may not look there: the walk tells which.
      if (
        !(e instanceof Deno.errors.NotFound) && !(e instanceof Deno.errors.NotADirectory) &&
        !(e instanceof Deno.errors.NotCapable)
      ) throw e;
    }
  }
  return await walk(root, absolute, path);
}

/**
 * Resolves `absolute` one component at a time, following symlinks (dangling ones included),
 * until a component is missing; the missing rest is appended as written, since it cannot contain
 * links. A path under the workspace starts the walk at the workspace root (a real path), so no
 * folder above it is ever looked at: Deft needs no permission on the workspace's ancestors.
 */
async function walk(root: string, absolute: string, path: string): Promise<string> {
  let current: string;
  let queue: string[];
  if (absolute === root || absolute.startsWith(root === sep ? sep : root + sep)) {
    current = root;
    queue = components(absolute.slice(root.length));
  } else {
    current = sep;
    queue = components(absolute);
  }
  let links = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === ".") continue;
    if (name === "..") {
      // Every folder reached so far is real (links were followed), so its parent is too.
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
        return queue.includes("..") ? await walk(root, rest, path) : rest;
      }
      if (e instanceof Deno.errors.NotCapable) {
        // Inside the workspace this is a grant Deft lacks; outside it, the path has left.
        if (isInside(root, next)) throw new PermissionMissingError(missingGrant(e, next));
        throw new OutsideWorkspaceError(
          `The path ${path} leaves the workspace ${root}: it passes through ${next}, which is ` +
            `outside it. Only paths inside the workspace can be used.`,
        );
      }
      if (isLoop(e)) throw loopError(path);
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
