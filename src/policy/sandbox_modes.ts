/**
 * The sandbox modes, on their own so that the command line's help can list them without loading
 * the sandbox's code (sandbox.ts re-exports them).
 *
 * How commands are confined: `none` runs them as Deft's own user; `workspace-write` uses bwrap;
 * `read-only` uses bwrap with the workspace read-only too. Every list of modes (config schema,
 * command-line choices, messages) is this one.
 */
export const SANDBOX_MODES = ["none", "workspace-write", "read-only"] as const;

/** One of `SANDBOX_MODES`. */
export type SandboxMode = typeof SANDBOX_MODES[number];
