/**
 * Sandboxes of the test's own for the freeze tests: a bubblewrap sandbox (its own namespaces, no
 * capabilities, `dir` the only writable folder, as the shell's) running a racer script, with this
 * test process standing for Deft; and the racer's counter.
 */

/** A bubblewrap sandbox running `script` (bash) with `dir` writable; `newSession` adds setsid. */
export function racerSandbox(
  dir: string,
  script: string,
  options: { newSession?: boolean } = {},
): Deno.ChildProcess {
  return new Deno.Command("bwrap", {
    args: [
      "--die-with-parent",
      ...(options.newSession ? ["--new-session"] : []),
      "--unshare-all",
      "--cap-drop",
      "ALL",
      "--ro-bind",
      "/",
      "/",
      "--bind",
      dir,
      dir,
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      "bash",
      "--noprofile",
      "--norc",
      "-c",
      script,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Kills the sandbox (its namespace ends with it) and waits for it. */
export async function stopSandbox(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch { /* gone */ }
  await child.status;
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A racer's counter: the size of the file it appends a byte to (0 before it exists). */
export async function fileSize(file: string): Promise<number> {
  return (await Deno.stat(file).catch(() => ({ size: 0 }))).size;
}
