/**
 * `none`'s only confinement: the command in a PID namespace of its own (with bwrap, else util-linux
 * `unshare`), so nothing it starts outlives it, and dying with Deft (setpriv's parent-death signal).
 */
import { findExecutable, succeeds } from "./executables.ts";
import type { SandboxedCommand, SandboxOptions } from "./sandbox_options.ts";
import { resolve } from "./paths.ts";

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
