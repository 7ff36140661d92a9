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
import { isReadOnly } from "./read_only.ts";
import { controlEntries } from "./control_cover.ts";
import { repoPins, repoPlaces } from "./repo_places.ts";
import { bwrapArgs } from "./bwrap_args.ts";
import { findBwrap } from "./executables.ts";
import { pidNamespaceCommand } from "./pid_namespace.ts";
import type { SandboxedCommand, SandboxOptions } from "./sandbox_options.ts";

// The sandbox's parts live in modules by job; importers keep importing them from here.
export { SANDBOX_MODES, type SandboxMode } from "./sandbox_modes.ts";
export {
  type SandboxedCommand,
  type SandboxOptions,
  SandboxUnavailableError,
} from "./sandbox_options.ts";
export {
  checkControlWorkspace,
  controlEntries,
  controlFolderHolding,
  writableThroughWorkspace,
} from "./control_cover.ts";
export {
  dieWithDeftPrefix,
  pidNamespaceArgs,
  pidNamespaceBwrap,
  pidNamespaceCommand,
  pidNamespaceUnshare,
} from "./pid_namespace.ts";
export { type DefaultSandbox, defaultSandbox } from "./default_sandbox.ts";
export { bwrapArgs, mountArgs, shownByWorkspace } from "./bwrap_args.ts";
export { hiddenSocketDirs, type MountEntry, type MountView, mountView } from "./mount_view.ts";
export { bwrapNotFound, findBwrap } from "./executables.ts";

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
  const writable = !isReadOnly({ sandbox: options.mode });
  const guarded = writable ? controlEntries(options.workspace) : [];
  // The workspace's own .git folder, bound again so that the model cannot move it off its covers.
  const pinned = writable ? repoPins(repoPlaces(options.workspace)) : [];
  const withGuard = guarded.length === 0 ? options : {
    ...options,
    readOnlyPaths: [...guarded, ...(options.readOnlyPaths ?? [])],
    writablePaths: [...pinned, ...(options.writablePaths ?? [])],
  };
  return { program: bwrap, args: [...bwrapArgs(withGuard), "--", ...argv] };
}
