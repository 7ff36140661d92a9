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
import { delimiter, isAbsolute, join, resolve } from "node:path";

/**
 * How commands are confined: `none` runs them as Deft's own user; `workspace-write` uses bwrap;
 * `read-only` uses bwrap with the workspace read-only too. Every list of modes (config schema,
 * command-line choices, messages) is this one.
 */
export const SANDBOX_MODES = ["none", "workspace-write", "read-only"] as const;

/** One of `SANDBOX_MODES`. */
export type SandboxMode = typeof SANDBOX_MODES[number];

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
  return { program: bwrap, args: [...bwrapArgs(options), "--", ...argv] };
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
 * saying what is unprotected and how to fix it. Checked once per process (one bwrap start).
 */
export function defaultSandbox(bwrapPath?: string): DefaultSandbox {
  const key = bwrapPath ?? "";
  const known = defaultCache.get(key);
  if (known) return known;
  const bwrap = findExecutable(bwrapPath ?? "bwrap");
  let chosen: DefaultSandbox;
  if (!bwrap) {
    chosen = { mode: "none", notice: unprotected("bubblewrap is not installed") };
  } else if (!succeeds(bwrap, probeArgs())) {
    chosen = { mode: "none", notice: unprotected(`bubblewrap (${bwrap}) cannot start here`) };
  } else {
    chosen = { mode: "workspace-write" };
  }
  defaultCache.set(key, chosen);
  return chosen;
}

const defaultCache = new Map<string, DefaultSandbox>();

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

/** True when `program args` can be started and exits 0. */
function succeeds(program: string, args: string[]): boolean {
  try {
    return new Deno.Command(program, { args, stdin: "null", stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/**
 * The bwrap options (everything before `--`) for `workspace-write`. Order matters: later mounts
 * cover earlier ones, so the private /tmp comes before the workspace (which may live in /tmp).
 */
export function bwrapArgs(options: SandboxOptions): string[] {
  const workspace = resolve(options.workspace);
  const args = [
    "--die-with-parent",
    "--new-session",
    "--unshare-all",
    ...(options.allowNetwork ? ["--share-net"] : []),
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    ...(options.hiddenDirs ?? hiddenSocketDirs()).flatMap((dir) => ["--tmpfs", dir]),
    isReadOnly({ sandbox: options.mode }) ? "--ro-bind" : "--bind",
    workspace,
    workspace,
  ];
  for (const path of options.readOnlyPaths ?? []) {
    const abs = resolve(path);
    args.push("--ro-bind", abs, abs);
  }
  for (const path of options.writablePaths ?? []) {
    const abs = resolve(path);
    args.push("--bind", abs, abs);
  }
  args.push("--chdir", resolve(options.cwd));
  return args;
}

/**
 * Where host services keep their Unix sockets (Docker, D-Bus, ssh-agent, systemd, X11): each is
 * covered by an empty private tmpfs inside the sandbox, so none of them can be connected to.
 * Only folders that exist and are real folders (not symlinks such as /var/run) are listed; bash
 * looks, because the permission-fenced tool host may not stat paths outside the workspace.
 */
export function hiddenSocketDirs(): string[] {
  const dirs = ["/run", "/var/run", "/var/tmp", "/dev/shm", "/var/lib/docker", "/tmp/.X11-unix"];
  const runtime = readEnv("XDG_RUNTIME_DIR");
  if (runtime && isAbsolute(runtime)) dirs.push(resolve(runtime));
  const key = dirs.join("\0");
  const known = realDirsCache.get(key);
  if (known) return known;
  const found = new Deno.Command("bash", {
    args: ["-c", 'for d; do [[ -d $d && ! -L $d ]] && printf "%s\\0" "$d"; done', "deft", ...dirs],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const real = new TextDecoder().decode(found.stdout).split("\0").filter((d) => d !== "");
  realDirsCache.set(key, real);
  return real;
}

const realDirsCache = new Map<string, string[]>();

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
