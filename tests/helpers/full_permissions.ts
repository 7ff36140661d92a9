/**
 * Runs a test in a child `deno test -A` when this process has narrowed permissions.
 *
 * The editor pins a path by changing into its folder and opening the bare name. Deno honours that
 * only with all permissions: under permission flags it turns a relative name into an absolute one
 * from the folder's path before opening, which a swapped-in symlink redirects. The race tests
 * check the pinning itself, so they run where it holds. Under narrowed flags (the tool worker's)
 * only the sandbox closes the race: race_test.ts runs it against the sandboxed tool host too.
 */
import assert from "node:assert/strict";

/** True when this process was started with `-A` (ffi is granted only then in our tasks). */
export function hasAllPermissions(): boolean {
  return Deno.permissions.querySync({ name: "ffi" }).state === "granted";
}

/** Runs the test named `name` in `file` (a module URL) under `deno test -A`; asserts it passed. */
export async function runWithAllPermissions(file: string, name: string): Promise<void> {
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--filter", `/^${escaped}$/`, new URL(file).pathname],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success && /ok \| 1 passed/.test(text), text.slice(-4000));
}
