/**
 * The bubblewrap command line of the confining modes (`workspace-write`, `read-only`): the
 * namespaces, and the mounts laid out so each lands on top of what holds it.
 */
import { isReadOnly } from "./read_only.ts";
import { hiddenSocketDirs, isBelow, type MountView, mountView } from "./mount_view.ts";
import type { SandboxOptions } from "./sandbox_options.ts";
import { join, resolve } from "./paths.ts";

/**
 * The bwrap options (everything before `--`) for `workspace-write` and `read-only`: the file
 * system read-only, the workspace writable (or read-only too), a private /tmp, the socket
 * folders empty, fresh /dev and /proc (see `mountArgs` for how the mounts are laid out).
 */
export function bwrapArgs(options: SandboxOptions): string[] {
  return [
    "--die-with-parent",
    "--new-session",
    "--unshare-all",
    ...(options.allowNetwork ? ["--share-net"] : []),
    "--cap-drop",
    "ALL",
    ...mountArgs(options, mountView(options.hiddenDirs)),
    "--chdir",
    resolve(options.cwd),
  ];
}

/** One mount operation, at `path`; `replacing` for /dev, /proc, /tmp and the socket folders. */
interface MountOp {
  path: string;
  args: string[];
  replacing?: boolean;
}

/**
 * The mounts, in an order where each one lands on top of the ones above it (bwrap applies them in
 * order; a later mount covers an earlier one at or above its path):
 *
 * - Folders are mounted shallowest first, so the workspace, Deft's folders, /dev, /proc, /tmp and
 *   the empty socket folders always sit on top of whatever holds them. A workspace that holds
 *   them (`/`, `/var`) no longer covers them: with the workspace at `/`, /dev, /proc, /tmp and the
 *   socket folders stay the sandbox's own.
 * - A folder shown read-only that holds a replaced folder (`/` holds /tmp; /var holds /var/tmp)
 *   is not bound whole: its entries are bound one by one (symlinks made again), the replaced ones
 *   left out, and the root made read-only at the end. bwrap binds recursively and then re-applies
 *   read-only, nosuid and nodev to every mount under the bound folder; a mount that disappears in
 *   between (a container a Docker daemon under /tmp starts or stops, propagated into the sandbox)
 *   fails the whole sandbox ("Can't bind mount /oldroot/ on /newroot/ … remount … Invalid
 *   argument"). What lives under /tmp, /run, /var/lib/docker … is never bound, so its mounts
 *   cannot.
 */
export function mountArgs(
  options: SandboxOptions,
  view: MountView,
  realPath: (path: string) => string | undefined = realPathOrNone,
): string[] {
  const workspace = resolve(options.workspace);
  const workspaceWritable = !isReadOnly({ sandbox: options.mode });
  const replaced: MountOp[] = [
    { path: "/dev", args: ["--dev", "/dev"] },
    { path: "/proc", args: ["--proc", "/proc"] },
    { path: "/tmp", args: ["--tmpfs", "/tmp"] },
    ...(options.hiddenDirs ?? view.hidden).map((dir) => {
      const abs = resolve(dir);
      return { path: abs, args: ["--tmpfs", abs] };
    }),
  ].map((op) => ({ ...op, replacing: true }));
  const replacedPaths = new Set(replaced.map((op) => op.path));
  const binds: { path: string; writable: boolean }[] = [
    { path: "/", writable: workspace === "/" && workspaceWritable },
    ...(workspace === "/" ? [] : [{ path: workspace, writable: workspaceWritable }]),
    ...(options.readOnlyPaths ?? []).map((p) => ({ path: resolve(p), writable: false })),
    ...(options.writablePaths ?? []).map((p) => ({ path: resolve(p), writable: true })),
  ];
  const explicit = new Set(binds.map((b) => b.path));
  // Only folders whose mounts come and go force a split; the others are covered on top.
  const holdsReplaced = (dir: string) =>
    [...replacedPaths].some((r) => r !== dir && isBelow(dir, r) && !STEADY.has(r));
  const ops: MountOp[] = [];
  let rootSplit = false;
  const bind = (path: string, writable: boolean) => {
    const entries = view.listings.get(path);
    if (!writable && entries && holdsReplaced(path)) {
      if (path === "/") rootSplit = true;
      for (const entry of entries) {
        const child = join(path, entry.name);
        // Replaced folders bring their own mount; explicit binds come on their own.
        if (replacedPaths.has(child) || explicit.has(child)) continue;
        if (entry.kind === "symlink") {
          ops.push({ path: child, args: ["--symlink", entry.target ?? "", child] });
        } else bind(child, false);
      }
      return;
    }
    ops.push({ path, args: [writable ? "--bind" : "--ro-bind", path, path] });
  };
  for (const b of binds) bind(b.path, b.writable);
  const kept = withoutRedundantBinds(ops, replaced, realPath);
  // Shallowest first; at one depth the replaced folders first (paths at one depth are siblings
  // or the same folder, and a workspace that is /tmp must land on the private /tmp).
  const rank = (op: MountOp) => op.replacing ? 0 : 1;
  const ordered = [...kept, ...replaced]
    .map((op, i) => ({ op, i, depth: depthOf(op.path) }))
    .sort((a, b) => a.depth - b.depth || rank(a.op) - rank(b.op) || a.i - b.i)
    .map(({ op }) => op.args);
  return [...ordered.flat(), ...(rootSplit ? ["--remount-ro", "/"] : [])];
}

/**
 * The binds without those that change nothing the sandbox sees, each a mount operation less
 * (bwrap reads the mount table again for every one):
 *
 * - the same path bound twice: bwrap applies both, the later on top, so only the later counts;
 * - a folder bound read-only inside a folder already bound read-only whole, with no other mount
 *   at or between them (no replaced folder, no writable bind, no symlink made) and no symlink on
 *   its path (`realPath` gives the path itself: inside and outside the sandbox it leads to the
 *   same folder). Deft's code, Deno's cache and the Deno binary under /work, /root or /usr are
 *   shown by the bind of that folder already. A path `realPath` cannot resolve keeps its bind.
 *
 * What remains shows exactly the same files, with the same writability.
 */
function withoutRedundantBinds(
  ops: readonly MountOp[],
  replaced: readonly MountOp[],
  realPath: (path: string) => string | undefined,
): MountOp[] {
  const isBind = (op: MountOp) => op.args[0] === "--bind" || op.args[0] === "--ro-bind";
  const last = new Map<string, number>();
  ops.forEach((op, i) => {
    if (isBind(op)) last.set(op.path, i);
  });
  const unique = ops.filter((op, i) => !isBind(op) || last.get(op.path) === i);
  const all = [...unique, ...replaced];
  const wholeReadOnly = unique.filter((op) => op.args[0] === "--ro-bind").map((op) => op.path);
  return unique.filter((op) => {
    if (op.args[0] !== "--ro-bind") return true;
    const holder = wholeReadOnly.find((dir) => dir !== op.path && isBelow(dir, op.path));
    if (holder === undefined) return true;
    const between = all.some((other) =>
      other !== op && other.path !== holder && isBelow(holder, other.path) &&
      isBelow(other.path, op.path)
    );
    return between || realPath(op.path) !== op.path;
  });
}

/** `path` with every symlink resolved, or undefined where that cannot be told. */
function realPathOrNone(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * True when the sandbox shows `path` through the workspace's own bind: `path` lies inside the
 * workspace and no folder the sandbox replaces with a private one (its /tmp, /dev, /proc, a hidden
 * socket folder) sits between the workspace and `path`. A path inside the workspace that such a
 * folder covers (Deft's code under /tmp with a workspace at `/`) must be bound on its own.
 */
export function shownByWorkspace(
  workspace: string,
  path: string,
  hidden: readonly string[] = hiddenSocketDirs(),
): boolean {
  const ws = resolve(workspace);
  const p = resolve(path);
  if (!isBelow(ws, p)) return false;
  return !["/dev", "/proc", "/tmp", ...hidden.map((d) => resolve(d))]
    .some((r) => r !== ws && isBelow(ws, r) && isBelow(r, p));
}

/**
 * Replaced folders whose own mounts hold still (the kernel's, or none): a folder above them is
 * bound whole and they are covered on top, which costs one bind instead of one per entry. Every
 * other replaced folder (/tmp, /run, a container runtime's storage) holds mounts that containers
 * add and remove, so what holds it is split.
 */
const STEADY = new Set(["/dev", "/proc", "/dev/shm", "/var/tmp", "/tmp/.X11-unix"]);

function depthOf(path: string): number {
  return path === "/" ? 0 : path.split("/").length - 1;
}
