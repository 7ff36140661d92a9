/**
 * What a sandboxed command is started with (`SandboxOptions`), what comes out (`SandboxedCommand`)
 * and the error for a sandbox that cannot be provided: shared by the sandbox's modules.
 */
import type { SandboxMode } from "./sandbox_modes.ts";

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
