/**
 * A fresh checkout for one task: `git clone` of the task's repository (a local path or a URL) into
 * the task's folder, then the task's commit, detached. Each task gets its own clone, so no two tasks
 * share a work tree, an index or a lock. Git never prompts (no terminal), and the clone does not
 * bring the source's hooks or config along.
 */
import { UsageError } from "../errors.ts";

const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "/bin/false", GCM_INTERACTIVE: "never" };

/** Clones `repo` at `commit` (default: its HEAD) into `dest`, which must not exist yet. */
export async function checkout(
  repo: string,
  commit: string | undefined,
  dest: string,
  signal: AbortSignal,
): Promise<void> {
  await git(["clone", "--quiet", "--no-recurse-submodules", "--", repo, dest], undefined, signal);
  if (commit !== undefined) {
    await git(["checkout", "--quiet", "--detach", commit, "--"], dest, signal).catch((e) => {
      throw new Error(`commit ${commit} not found in ${repo}: ${(e as Error).message}`);
    });
  }
}

async function git(args: string[], cwd: string | undefined, signal: AbortSignal): Promise<void> {
  let out;
  try {
    out = await new Deno.Command("git", {
      args,
      cwd,
      env: GIT_ENV,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      signal,
    }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError("git is not installed; deft batch needs it to check out each task.");
    }
    throw e;
  }
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-3).join(" / ");
    throw new Error(`git ${args[0]} failed: ${text || `exit code ${out.code}`}`);
  }
}
