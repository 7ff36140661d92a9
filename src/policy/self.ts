/**
 * How to start this same Deft again in a child process (a task's `deft run`, a Slurm array task):
 * the compiled executable itself, or Deno running the module that started this process (main.ts
 * from source, or the one-file bundle) with the permissions of `deno task deft`.
 */
const UNSTABLE_FLAGS = [
  "--unstable-raw-imports",
  "--unstable-worker-options",
  "--unstable-lazy-dynamic-imports",
  "--no-prompt",
];

/** The permissions of `deno task deft`. */
export const FULL_PERMISSION_FLAGS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-net",
  "--allow-sys",
];

/**
 * True when Deft runs as a module under `deno run` (from source, or the bundle), where the
 * permission flags `deftArgv` is given are the child's; false for a compiled executable, which
 * keeps the permissions it was built with.
 */
export function takesPermissionFlags(exec = Deno.execPath()): boolean {
  // The file name alone, without node:path (its first use starts Node's compatibility layer).
  return /(?:^|\/)deno(\.exe)?$/i.test(exec);
}

/**
 * The argv prefix that runs Deft, e.g. `[deno, run, …flags, /path/main.ts]`, with `permissions`
 * as its Deno permission flags (a compiled executable keeps the ones it was built with),
 * `main` as the module Deno runs and `exec` as the program (this process's; another path for a
 * container, where Deno or the compiled Deft is bound in elsewhere).
 */
export function deftArgv(
  permissions: readonly string[] = FULL_PERMISSION_FLAGS,
  main = Deno.mainModule,
  exec = Deno.execPath(),
): string[] {
  if (!takesPermissionFlags(exec)) return [exec];
  const entry = main.startsWith("file:") ? decodeURIComponent(new URL(main).pathname) : main;
  return [exec, "run", ...UNSTABLE_FLAGS, ...permissions, entry];
}
