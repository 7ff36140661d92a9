/**
 * A fresh checkout for one task: `git clone` of the task's repository (a local path or a URL) into
 * the task's folder, then the task's commit, detached. Each task gets its own clone, so no two tasks
 * share a work tree, an index or a lock. Git runs hardened (policy/git.ts): it never prompts, runs
 * no hook or driver, and the clone does not bring the source's hooks or config along.
 */
import { dirname } from "node:path";
import { UsageError } from "../errors.ts";
import { runGit } from "../policy/git.ts";

/** Clones `repo` at `commit` (default: its HEAD) into `dest`, which must not exist yet. */
export async function checkout(
  repo: string,
  commit: string | undefined,
  dest: string,
  signal: AbortSignal,
): Promise<void> {
  // The clone starts beside its destination, in a folder Deft made, not in a repository.
  await git(
    ["clone", "--quiet", "--no-recurse-submodules", "--", repo, dest],
    dirname(dest),
    signal,
  );
  if (commit !== undefined) {
    await git(["checkout", "--quiet", "--detach", commit, "--"], dest, signal).catch((e) => {
      throw new Error(`commit ${commit} not found in ${repo}: ${(e as Error).message}`);
    });
  }
}

async function git(args: string[], cwd: string, signal: AbortSignal): Promise<void> {
  let out;
  try {
    out = await runGit(cwd, args, { fetch: true, signal });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError("git is not installed; deft batch needs it to check out each task.");
    }
    throw e;
  }
  if (!out.ok) {
    const text = out.err.trim().split("\n").slice(-3).join(" / ");
    throw new Error(`git ${args[0]} failed: ${text || `exit code ${out.code}`}`);
  }
}
