/**
 * Sandbox policy for shell commands. `none` only puts the command in its own PID namespace (with
 * bwrap when it can, else util-linux `unshare`), so nothing it starts outlives it.
 * `workspace-write` runs a command inside bubblewrap (bwrap): the whole filesystem read-only
 * except the workspace (bound read-write at its own path, so absolute paths keep working) and a
 * private /tmp; the folders where host services keep their sockets (/run, /var/tmp, /dev/shm,
 * $XDG_RUNTIME_DIR …) replaced by empty private ones; no network unless allowed; fresh /dev and
 * /proc; its own PID namespace, so every process in it dies with it; a new session, so it has no
 * controlling terminal; and it dies with Deft. This module only builds command lines: it knows
 * nothing about tools or models, and it never falls back to running a command unsandboxed.
 */
import { readEnv } from "../env.ts";
import { isReadOnly } from "./read_only.ts";
import { type ControlPlace, deftCacheDir, deftControlPlaces } from "./dirs.ts";
import { probeLaunch, runChildSync } from "./spawn.ts";
import { delimiter, dirname, isAbsolute, join, relative, resolve } from "./paths.ts";

// The modes live in a module of their own (the command line's help lists them without this one).
import type { SandboxMode } from "./sandbox_modes.ts";
export { SANDBOX_MODES, type SandboxMode } from "./sandbox_modes.ts";

/** Everything needed to decide how one command is started. */
export interface SandboxOptions {
  mode: SandboxMode;
  /** Absolute, symlink-free workspace root; writable inside the sandbox. */
  workspace: string;
  /** Directory the command starts in. */
  cwd: string;
  /** Keep the host network (default: only a private loopback). */
  allowNetwork?: boolean;
  /** Host directories to show read-only at the same path, on top of the private /tmp. */
  readOnlyPaths?: readonly string[];
  /**
   * Host directories to bind writable at the same path, on top of the private /tmp (Deft's own
   * scratch folders, never the user's: a temp index, the tool host's temp and cache folders).
   */
  writablePaths?: readonly string[];
  /** The bwrap executable: a path, or a name looked up on PATH (default `bwrap`). */
  bwrapPath?: string;
  /** Folders to cover with an empty tmpfs (default: `hiddenSocketDirs()`). */
  hiddenDirs?: readonly string[];
  /**
   * For `none` when bwrap cannot make a PID namespace: util-linux `unshare`, a path or a name on
   * PATH (default `unshare`). A path that is not there turns this fallback off.
   */
  unsharePath?: string;
}

/** A program and its arguments, ready for `Deno.Command`. */
export interface SandboxedCommand {
  program: string;
  args: string[];
}

/** The sandbox was asked for but cannot be provided. The message says how to fix it. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxUnavailableError";
  }
}

/** The program and arguments that run `argv` under `options`; throws `SandboxUnavailableError`. */
export function sandboxCommand(
  argv: readonly string[],
  options: SandboxOptions,
): SandboxedCommand {
  if (argv.length === 0) throw new TypeError("sandboxCommand needs a program to run");
  if (options.mode === "none") {
    return pidNamespaceCommand(argv, options) ?? { program: argv[0], args: argv.slice(1) };
  }
  const bwrap = findBwrap(options.bwrapPath);
  const guarded = isReadOnly({ sandbox: options.mode }) ? [] : controlEntries(options.workspace);
  const withGuard = guarded.length === 0
    ? options
    : { ...options, readOnlyPaths: [...guarded, ...(options.readOnlyPaths ?? [])] };
  return { program: bwrap, args: [...bwrapArgs(withGuard), "--", ...argv] };
}

/**
 * The entries right below a writable workspace that hold Deft's control places
 * (`deftControlPlaces`: the user's config with its hooks and trusted folders, Deft's state and
 * cache, Deno's compiled code and Deno itself), to show read-only on top of the workspace: with
 * `-w ~`, the model must not write what the next Deft runs on the host. The entry below the
 * workspace is covered, not the path itself: inside the workspace the model could rename a folder
 * on the way (a mount moves with it) and make a new one where Deft looks next; a mount point cannot
 * be renamed or replaced. A missing entry is made first (0700) so that it can be covered; an entry
 * that is a link cannot be (the model could swap the link), and the sandbox is refused with what
 * to do. A workspace that is a control folder, or lies inside one, is refused too (see
 * `controlFolderHolding`). Each place counts at its path as written and at its real path.
 */
export function controlEntries(
  workspace: string,
  places: readonly ControlPlace[] = deftControlPlaces(),
): string[] {
  const ws = resolve(workspace);
  const all = withRealPaths(places);
  const holder = controlFolderHolding(ws, all);
  if (holder) throw insideControl(ws, holder);
  const entries = new Set<string>();
  for (const { path } of all) {
    const p = resolve(path);
    // A path under a folder the sandbox makes private (its /tmp) is out of the model's reach.
    if (!shownByWorkspace(ws, p)) continue;
    const rest = p.slice(ws === "/" ? 1 : ws.length + 1);
    entries.add(join(ws, rest.split("/")[0]));
  }
  for (const entry of entries) {
    let info: Deno.FileInfo | undefined;
    try {
      info = Deno.lstatSync(entry);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw controlRefusal(ws, entry, String(e));
    }
    if (info?.isSymlink) throw controlRefusal(ws, entry, "it is a link");
    if (!info) {
      try {
        Deno.mkdirSync(entry, { mode: 0o700 });
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) {
          throw controlRefusal(ws, entry, `it cannot be made (${e})`);
        }
        if (Deno.lstatSync(entry).isSymlink) throw controlRefusal(ws, entry, "it is a link");
      }
    }
  }
  return [...entries];
}

/**
 * The control place that is the workspace or holds it, if any. Nothing in such a workspace could
 * be left writable: every file there is one Deft acts on (or will, under a name the model picks:
 * a new config file, a session to resume, a compiled module), so no set of covered entries would
 * do, and a whole workspace shown read-only would fail every edit of the task half-way. A
 * writable sandbox there is refused before the session starts (see `checkControlWorkspace`).
 */
export function controlFolderHolding(
  workspace: string,
  places: readonly ControlPlace[] = withRealPaths(deftControlPlaces()),
): ControlPlace | undefined {
  const ws = resolve(workspace);
  return places.find((place) => isBelow(resolve(place.path), ws));
}

/**
 * Throws `SandboxUnavailableError` when a sandbox in `mode` would let the model write the
 * workspace and the workspace is, or lies inside, one of Deft's control folders. For the start
 * of a session, so the refusal comes before the task, not at its first command.
 */
export function checkControlWorkspace(workspace: string, mode: SandboxMode): void {
  if (mode === "none" || isReadOnly({ sandbox: mode })) return;
  const holder = controlFolderHolding(workspace);
  if (holder) throw insideControl(resolve(workspace), holder);
}

/** Each place, and again at its real path where that differs (a `~/.config` linked elsewhere). */
function withRealPaths(places: readonly ControlPlace[]): ControlPlace[] {
  const all = [...places];
  for (const place of places) {
    const real = realPathOf(resolve(place.path));
    if (real && real !== resolve(place.path)) all.push({ ...place, path: real });
  }
  return all;
}

/** `path` with its longest existing part resolved; undefined where Deno may not look. */
function realPathOf(path: string): string | undefined {
  for (let dir = path;; dir = dirname(dir)) {
    try {
      const real = Deno.realPathSync(dir);
      return dir === path ? real : join(real, relative(dir, path));
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) || dir === "/") return undefined;
    }
  }
}

function insideControl(workspace: string, holder: ControlPlace): SandboxUnavailableError {
  const where = resolve(holder.path) === workspace ? "is" : `lies inside ${holder.path},`;
  return new SandboxUnavailableError(
    `The workspace ${workspace} ${where} ${holder.what}: what Deft runs next, on the host, is ` +
      `kept there, so the model may not write in it. Look at it with --sandbox read-only, change ` +
      `it yourself, or work on a copy in another folder and copy back what you checked.`,
  );
}

function controlRefusal(workspace: string, entry: string, why: string): SandboxUnavailableError {
  return new SandboxUnavailableError(
    `The workspace ${workspace} holds ${entry}, where Deft keeps what it runs next (its config, ` +
      `state or Deno's cache), and the sandbox cannot keep the model from changing it: ${why}. ` +
      `Use a narrower workspace (-w DIR), or --sandbox read-only.`,
  );
}

/**
 * True when a folder Deft writes for itself (the code graph's) is writable through the workspace's
 * own bind: shown by the workspace and not under an entry `controlEntries` covers read-only.
 */
export function writableThroughWorkspace(workspace: string, path: string): boolean {
  if (!shownByWorkspace(workspace, path) || controlFolderHolding(workspace)) return false;
  const p = resolve(path);
  return !controlEntries(workspace).some((entry) => p === entry || isBelow(entry, p));
}

/**
 * The bwrap options for `none`: no confinement of files or network, only a PID namespace with its
 * own /proc, so every process the command starts (`setsid`, double forks, a fork bomb) ends when
 * the namespace's first process does, and that one dies with Deft, even when Deft is killed.
 */
export function pidNamespaceArgs(options: SandboxOptions): string[] {
  return [
    "--die-with-parent",
    "--unshare-pid",
    "--dev-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--chdir",
    resolve(options.cwd),
  ];
}

/**
 * The bwrap to hold an unsandboxed command in a PID namespace, or undefined when bwrap is missing
 * or cannot create one here (no user namespaces); the command then runs as it is. Checked once.
 */
export function pidNamespaceBwrap(bwrapPath?: string): string | undefined {
  const key = bwrapPath ?? "";
  if (pidNamespaceCache.has(key)) return pidNamespaceCache.get(key);
  const bwrap = findExecutable(bwrapPath ?? "bwrap");
  const args = [...pidNamespaceArgs({ mode: "none", workspace: "/", cwd: "/" }), "--", "true"];
  const found = bwrap && succeeds(bwrap, args) ? bwrap : undefined;
  pidNamespaceCache.set(key, found);
  return found;
}

const pidNamespaceCache = new Map<string, string | undefined>();

/**
 * `argv` held in its own PID namespace without confining anything else: with bwrap (see
 * `pidNamespaceArgs`), else with util-linux `unshare` (see `pidNamespaceUnshare`), else undefined.
 */
export function pidNamespaceCommand(
  argv: readonly string[],
  options: SandboxOptions,
): SandboxedCommand | undefined {
  const bwrap = pidNamespaceBwrap(options.bwrapPath);
  if (bwrap) return { program: bwrap, args: [...pidNamespaceArgs(options), "--", ...argv] };
  const unshare = pidNamespaceUnshare(options.unsharePath);
  if (!unshare) return undefined;
  const init = ["bash", "--noprofile", "--norc", "-c", NAMESPACE_INIT, "deft-init"];
  return { program: unshare[0], args: [...unshare.slice(1), "--", ...init, ...argv] };
}

/**
 * The first process of an `unshare` namespace (bwrap brings its own). The command runs as its
 * child, not as that first process, so it behaves as anywhere else: `kill -9 $$` ends it (the
 * first process of a namespace ignores signals it has no handler for, even SIGKILL from inside),
 * and its exit status comes back (128 + n when killed by signal n, as bwrap reports it). This one
 * traps the usual signals with a handler that does nothing, so a SIGINT meant for the shell leaves
 * it alone (the command gets the default handlers back at exec), and its own job notices go to
 * /dev/null. When it ends, the kernel kills everything left in the namespace.
 */
const NAMESPACE_INIT = [
  "trap : INT TERM HUP QUIT",
  "exec 3>&2 2>/dev/null",
  '"$@" <&0 2>&3 3>&- &',
  "pid=$!",
  'while :; do wait "$pid"; s=$?; kill -0 "$pid" || exit "$s"; done',
].join("\n");

// `--kill-child` kills the namespace when unshare dies; `setpriv --pdeathsig` makes unshare die
// with Deft, as bwrap's `--die-with-parent` does (without it, only a shell that reads the end of
// its input, because Deft is gone, ends the namespace). Root needs no user namespace; anyone else
// maps their own uid (util-linux 2.38), or root, on older versions.
const UNSHARE_ARGS = ["--fork", "--pid", "--kill-child", "--mount-proc"];
const UNSHARE_USERS = [[], ["--map-current-user"], ["--map-root-user"]];

/**
 * The command line (program first) that runs a command in a new PID namespace with `unshare`, or
 * undefined when unshare is missing, may not be started or cannot make a namespace here. The
 * variants are tried once each, in order; the answer is kept.
 */
export function pidNamespaceUnshare(unsharePath = "unshare"): string[] | undefined {
  if (unshareCache.has(unsharePath)) return unshareCache.get(unsharePath);
  let found: string[] | undefined;
  const unshare = findExecutable(unsharePath);
  const dieWithDeft = dieWithDeftPrefix();
  const wrappers = dieWithDeft.length > 0 ? [dieWithDeft, []] : [[]];
  search: for (const wrapper of wrappers) {
    for (const users of UNSHARE_USERS) {
      if (!unshare) break search;
      const candidate = [...wrapper, unshare, ...users, ...UNSHARE_ARGS];
      if (succeeds(candidate[0], [...candidate.slice(1), "--", "true"])) {
        found = candidate;
        break search;
      }
    }
  }
  unshareCache.set(unsharePath, found);
  return found;
}

const unshareCache = new Map<string, string[] | undefined>();

/**
 * The prefix (`setpriv --pdeathsig KILL --`) that makes a command Deft starts die with the Deft
 * that started it, even one killed by SIGKILL; empty when setpriv is missing or may not be
 * started. Checked once. The signal follows the command across `exec` (not across a fork).
 */
export function dieWithDeftPrefix(): readonly string[] {
  if (deathPrefix) return deathPrefix;
  const setpriv = findExecutable("setpriv");
  const prefix = setpriv ? [setpriv, "--pdeathsig", "KILL", "--"] : [];
  deathPrefix = prefix.length > 0 && succeeds(prefix[0], [...prefix.slice(1), "true"])
    ? prefix
    : [];
  return deathPrefix;
}

let deathPrefix: string[] | undefined;

/** What runs when no sandbox was asked for, and why, when that is no sandbox at all. */
export interface DefaultSandbox {
  mode: SandboxMode;
  /** One line for stderr when the default had to fall back to `none`. */
  notice?: string;
}

/**
 * The sandbox to use when neither a flag, `DEFT_SANDBOX` nor a config file asked for one:
 * `workspace-write` where bubblewrap is installed and can start here, else `none` with a notice
 * saying what is unprotected and how to fix it. Checked once per process, and a bwrap that
 * started is remembered per machine (see `probeMemory`), so most starts run no probe at all.
 */
export function defaultSandbox(bwrapPath?: string): DefaultSandbox {
  const key = bwrapPath ?? "";
  const known = defaultCache.get(key);
  if (known) return known;
  const bwrap = findExecutable(bwrapPath ?? "bwrap");
  let chosen: DefaultSandbox;
  if (!bwrap) {
    chosen = { mode: "none", notice: unprotected("bubblewrap is not installed") };
  } else if (!startsHere(bwrap)) {
    chosen = { mode: "none", notice: unprotected(`bubblewrap (${bwrap}) cannot start here`) };
  } else {
    chosen = { mode: "workspace-write" };
  }
  defaultCache.set(key, chosen);
  return chosen;
}

const defaultCache = new Map<string, DefaultSandbox>();

/** True when `bwrap` can make the sandbox here: remembered, else probed (and then remembered). */
function startsHere(bwrap: string): boolean {
  const memory = probeMemory(bwrap);
  if (memory && rememberedWorking(memory)) return true;
  const works = succeeds(bwrap, probeArgs());
  if (works && memory) rememberWorking(memory);
  return works;
}

/**
 * Where a working bwrap is remembered, and under what key: what decides whether bwrap can make
 * its namespaces here, as far as Deft can see it without `--allow-all` (Deno reads /proc only
 * with that). The program itself (path, device, inode, size, change time: a new or upgraded
 * bwrap), the kernel's release and this boot (the boot time, from the uptime), the user, and the
 * machine or container Deft runs in (its host name, and the files Docker and Podman put in a
 * container). Undefined when any of it cannot be read (no `--allow-sys`): then bwrap is probed.
 *
 * Only "it works" is remembered, never "it does not", and that fails closed: if the answer went
 * stale anyway (user namespaces turned off by sysctl since, without a reboot), the first sandbox
 * Deft then starts fails with its own error saying bubblewrap cannot start, and nothing runs
 * unsandboxed. A file someone else wrote can only claim that bwrap works, which the first
 * sandboxed child checks for real. A bwrap that does not start is probed at every start.
 */
function probeMemory(bwrap: string): { file: string; key: string } | undefined {
  try {
    const program = Deno.statSync(bwrap);
    const booted = Math.round((Date.now() / 1000 - Deno.osUptime()) / 10);
    const parts = [
      bwrap,
      program.dev,
      program.ino,
      program.size,
      program.ctime?.getTime() ?? program.mtime?.getTime(),
      Deno.osRelease(),
      booted,
      Deno.uid(),
      Deno.hostname(),
      ...CONTAINER_MARKS.map(exists),
    ];
    return { file: join(deftCacheDir(), "sandbox-probe.json"), key: JSON.stringify(parts) };
  } catch {
    return undefined;
  }
}

/** Files a container runtime puts in its containers. */
const CONTAINER_MARKS = ["/.dockerenv", "/run/.containerenv"];

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

function rememberedWorking(memory: { file: string; key: string }): boolean {
  try {
    const saved = JSON.parse(Deno.readTextFileSync(memory.file));
    return Array.isArray(saved?.working) && saved.working.includes(memory.key);
  } catch {
    return false;
  }
}

/** Adds `memory.key` to the file (the last few keys: a machine with two bwraps keeps both). */
function rememberWorking(memory: { file: string; key: string }): void {
  try {
    let working: string[] = [];
    try {
      const saved = JSON.parse(Deno.readTextFileSync(memory.file));
      if (Array.isArray(saved?.working)) {
        working = saved.working.filter((k: unknown) => typeof k === "string");
      }
    } catch {
      // None yet, or unreadable: start afresh.
    }
    working = [...working.filter((k) => k !== memory.key), memory.key].slice(-4);
    Deno.mkdirSync(dirname(memory.file), { recursive: true });
    const temp = `${memory.file}.${Deno.pid}.tmp`;
    Deno.writeTextFileSync(temp, JSON.stringify({ working }) + "\n");
    Deno.renameSync(temp, memory.file);
  } catch {
    // Deft may not write its cache: the probe simply runs again next time.
  }
}

/** The namespaces and mounts the sandbox uses (host sockets aside), around `true`. */
function probeArgs(): string[] {
  return [
    ...bwrapArgs({ mode: "read-only", workspace: "/", cwd: "/", hiddenDirs: [] }),
    "--",
    "true",
  ];
}

function unprotected(why: string): string {
  return `${why}, so the model's commands and file tools run unsandboxed: they can write ` +
    "anywhere you can and reach the network. Install bubblewrap (Debian/Ubuntu: " +
    "`apt-get install -y bubblewrap`), or pass --sandbox none to say this is intended.";
}

/** True when `program args` can be started and exits 0 (started like every child: see spawn.ts). */
function succeeds(program: string, args: string[]): boolean {
  try {
    return runChildSync(probeLaunch(program, args), { stdout: "null", stderr: "null" }).success;
  } catch {
    return false;
  }
}

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

/**
 * What the host's file system looks like where the sandbox splits it: the socket folders that
 * exist (real folders, not symlinks), and the entries of each folder above a folder the sandbox
 * replaces (/tmp, /dev, /proc, the socket folders), so the sandbox can show that folder's other
 * entries without binding the replaced one.
 */
export interface MountView {
  /** The socket folders to cover with an empty tmpfs. */
  hidden: readonly string[];
  /** Folder → its entries; a folder missing here is bound whole. */
  listings: ReadonlyMap<string, readonly MountEntry[]>;
}

/** One entry of a listed folder. */
export interface MountEntry {
  name: string;
  kind: "dir" | "file" | "symlink";
  /** A symlink's target, as it is written. */
  target?: string;
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
export function mountArgs(options: SandboxOptions, view: MountView): string[] {
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
  // Shallowest first; at one depth the replaced folders first (paths at one depth are siblings
  // or the same folder, and a workspace that is /tmp must land on the private /tmp).
  const rank = (op: MountOp) => op.replacing ? 0 : 1;
  const ordered = [...ops, ...replaced]
    .map((op, i) => ({ op, i, depth: depthOf(op.path) }))
    .sort((a, b) => a.depth - b.depth || rank(a.op) - rank(b.op) || a.i - b.i)
    .map(({ op }) => op.args);
  return [...ordered.flat(), ...(rootSplit ? ["--remount-ro", "/"] : [])];
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

/** True when `path` is `dir` or inside it (both absolute, normalised). */
function isBelow(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/**
 * Where host services keep their Unix sockets (Docker, D-Bus, ssh-agent, systemd, X11), and where
 * container runtimes keep their containers' file systems: each is covered by an empty private
 * tmpfs inside the sandbox, so none of them can be connected to or read, and their mounts, which
 * come and go with the containers, are never bound.
 */
const SOCKET_DIRS = [
  "/run",
  "/var/run",
  "/var/tmp",
  "/dev/shm",
  "/var/lib/docker",
  "/var/lib/containers",
  "/tmp/.X11-unix",
];

/**
 * The socket folders that exist here and are real folders (not symlinks such as /var/run): see
 * `SOCKET_DIRS`, plus `$XDG_RUNTIME_DIR`.
 */
export function hiddenSocketDirs(): string[] {
  return [...mountView().hidden];
}

/**
 * The host's layout as the sandbox needs it (see `MountView`), looked at once per process for
 * each set of folders. bash looks, because the permission-fenced tool worker may not read paths
 * outside the workspace; it is started like every other child (spawn.ts). Where bash cannot
 * look, nothing is split or hidden beyond what was asked.
 */
export function mountView(extraHidden: readonly string[] = []): MountView {
  const candidates = [...SOCKET_DIRS];
  const runtime = readEnv("XDG_RUNTIME_DIR");
  if (runtime && isAbsolute(runtime)) candidates.push(resolve(runtime));
  const replaced = ["/dev", "/proc", "/tmp", ...candidates, ...extraHidden.map((d) => resolve(d))];
  // Folders above a replaced one, unless inside a replaced one themselves (no need to list /tmp).
  const toList = new Set<string>();
  for (const path of replaced) {
    for (let dir = dirname(path);; dir = dirname(dir)) {
      if (!replaced.some((r) => isBelow(r, dir))) toList.add(dir);
      if (dir === "/") break;
    }
  }
  const key = [...candidates, "\0", ...toList].join("\0");
  const known = viewCache.get(key);
  if (known) return known;
  const view = lookAtHost(candidates, [...toList]);
  viewCache.set(key, view);
  return view;
}

const viewCache = new Map<string, MountView>();

/** The bash that reports real folders among its first arguments, then lists the folders after `--`. */
const LOOK = [
  "shopt -s nullglob dotglob",
  "list=",
  "for a; do if [[ $a == -- ]]; then list=1; continue; fi",
  "  [[ -d $a && ! -L $a ]] || continue",
  '  if [[ -z $list ]]; then printf "H\\0%s\\0" "$a"; continue; fi',
  '  printf "D\\0%s\\0" "$a"',
  '  for e in "${a%/}"/*; do n=${e##*/}',
  '    if [[ -L $e ]]; then printf "L\\0%s\\0%s\\0" "$n" "$(readlink -- "$e")"',
  '    elif [[ -d $e ]]; then printf "d\\0%s\\0" "$n"',
  '    elif [[ -f $e ]]; then printf "f\\0%s\\0" "$n"; fi',
  "  done",
  "done",
].join("\n");

function lookAtHost(candidates: readonly string[], dirs: readonly string[]): MountView {
  return lookDirectly(candidates, dirs) ?? lookWithBash(candidates, dirs);
}

/**
 * The same look as `LOOK`, by Deno itself, where this process may read everything (Deft's main
 * thread): no bash and no `readlink` per symlink to start, most of a one-off call's mount set-up.
 * Deno asks for --allow-all to look at some system folders (/dev/shm): bash looks at those
 * alone. Undefined where Deno may not read the rest (the permission-fenced tool worker): bash
 * looks at everything then.
 */
function lookDirectly(
  candidates: readonly string[],
  dirs: readonly string[],
): MountView | undefined {
  try {
    if (Deno.permissions.querySync({ name: "read" }).state !== "granted") return undefined;
    // True, false, or undefined where Deno would not look.
    const realDir = (path: string) => {
      try {
        const info = Deno.lstatSync(path);
        return info.isDirectory && !info.isSymlink;
      } catch (e) {
        return e instanceof Deno.errors.NotCapable ? undefined : false;
      }
    };
    const seen = candidates.map((path) => ({ path, real: realDir(path) }));
    const unseen = seen.filter((c) => c.real === undefined).map((c) => c.path);
    const byBash = unseen.length > 0 ? lookWithBash(unseen, [], true) : undefined;
    if (unseen.length > 0 && !byBash) return undefined;
    const hidden = seen.filter((c) => c.real ?? byBash!.hidden.includes(c.path)).map((c) => c.path);
    const listings = new Map<string, MountEntry[]>();
    for (const dir of dirs) {
      const real = realDir(dir);
      if (real === undefined) return undefined;
      if (!real) continue;
      const entries: MountEntry[] = [];
      listings.set(dir, entries);
      let names: Deno.DirEntry[];
      try {
        names = [...Deno.readDirSync(dir)];
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) return undefined;
        continue; // Unreadable: like bash's glob, no entries.
      }
      // bash's glob order (C locale), so the mounts come out as they did.
      names.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      for (const entry of names) {
        const path = join(dir, entry.name);
        if (entry.isSymlink) {
          let target = "";
          try {
            target = Deno.readLinkSync(path);
          } catch (e) {
            if (e instanceof Deno.errors.NotCapable) return undefined;
          }
          entries.push({ name: entry.name, kind: "symlink", target });
        } else if (entry.isDirectory) entries.push({ name: entry.name, kind: "dir" });
        else if (entry.isFile) entries.push({ name: entry.name, kind: "file" });
      }
    }
    return { hidden, listings };
  } catch {
    return undefined;
  }
}

/** bash's look; with `strict`, undefined when bash cannot look (else an empty view). */
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict?: false,
): MountView;
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict: true,
): MountView | undefined;
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict = false,
): MountView | undefined {
  const hidden: string[] = [];
  const listings = new Map<string, MountEntry[]>();
  let out: Deno.CommandOutput;
  try {
    out = runChildSync(probeLaunch("bash", ["-c", LOOK, "deft", ...candidates, "--", ...dirs]));
  } catch {
    return strict ? undefined : { hidden, listings };
  }
  if (!out.success) return strict ? undefined : { hidden, listings };
  const words = new TextDecoder().decode(out.stdout).split("\0");
  let current: MountEntry[] | undefined;
  for (let i = 0; i < words.length - 1;) {
    const tag = words[i++];
    if (tag === "H") hidden.push(words[i++]);
    else if (tag === "D") listings.set(words[i++], current = []);
    else if (tag === "L") current?.push({ name: words[i++], kind: "symlink", target: words[i++] });
    else if (tag === "d") current?.push({ name: words[i++], kind: "dir" });
    else if (tag === "f") current?.push({ name: words[i++], kind: "file" });
    else break;
  }
  return { hidden, listings };
}

/**
 * The bwrap executable to run: `bwrapPath` itself when it contains a slash, else the first match
 * on PATH. Throws `SandboxUnavailableError` with install instructions when it is missing. Where
 * Deno may not look (a permission-fenced tool host), the name is returned unchecked and starting
 * it reports a missing bwrap instead (see `bwrapNotFound`).
 */
export function findBwrap(bwrapPath = "bwrap"): string {
  const found = findExecutable(bwrapPath);
  if (found) return found;
  throw bwrapNotFound(bwrapPath.includes("/") ? resolve(bwrapPath) : bwrapPath);
}

/**
 * `program` itself (made absolute) when it contains a slash, else its first match on PATH;
 * undefined when it is not there. Where Deno may not look, the name is returned unchecked.
 */
function findExecutable(program: string): string | undefined {
  if (program.includes("/")) {
    const abs = isAbsolute(program) ? program : resolve(program);
    return isExecutableFile(abs) === false ? undefined : abs;
  }
  // Without env permission (or no PATH), the usual places.
  const path = readEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
  let unknown = false;
  for (const dir of path.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, program);
    const found = isExecutableFile(candidate);
    if (found) return candidate;
    if (found === undefined) unknown = true;
  }
  return unknown ? program : undefined;
}

/** The error for a bwrap that is not there (also when starting `program` says so). */
export function bwrapNotFound(program: string): SandboxUnavailableError {
  const what = program.includes("/") ? program : `\`${program}\` (searched PATH)`;
  return new SandboxUnavailableError(missingMessage(what));
}

/** True or false when known; undefined when Deno may not look. */
function isExecutableFile(path: string): boolean | undefined {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return undefined;
    }
    return false;
  }
}

function missingMessage(what: string): string {
  return `The sandbox needs bubblewrap, but ${what} was not found. ` +
    "Install it (Debian/Ubuntu: `apt-get install -y bubblewrap`; Fedora: " +
    "`dnf install bubblewrap`; Arch: `pacman -S bubblewrap`), or set `sandbox: none` to run " +
    "commands without a sandbox.";
}
