/**
 * The patch a run produced: every change against HEAD (or a base commit) in the workspace's git
 * repository, including new files that git does not track yet. A throwaway index is used, so the
 * user's staging area is never touched. Git runs hardened (see policy/git.ts): the repository's
 * own filters, diff drivers, hooks and fsmonitor never run.
 */
import { type GitResult, runGit } from "../policy/git.ts";

function git(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<GitResult> {
  return runGit(cwd, args, { env });
}

/** True when `dir` is inside a git work tree. */
export async function isGitRepo(dir: string): Promise<boolean> {
  const r = await git(dir, ["rev-parse", "--is-inside-work-tree"]).catch(() => undefined);
  return r?.ok === true && r.out.trim() === "true";
}

/** The diff of the work tree against `base` (default HEAD), untracked files included. */
export async function workspacePatch(dir: string, base?: string): Promise<string> {
  if (!await isGitRepo(dir)) return "";
  const index = await Deno.makeTempFile({ prefix: "deft-index-" });
  try {
    const env = { GIT_INDEX_FILE: index };
    const hasHead = (await git(dir, ["rev-parse", "--verify", "-q", "HEAD"])).ok;
    await git(dir, hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env);
    const added = await git(dir, ["add", "-A", "."], env);
    if (!added.ok) throw new Error(`git add failed: ${added.err.trim()}`);
    const against = base ?? (hasHead ? "HEAD" : undefined);
    const args = [
      "-c",
      "core.quotepath=false",
      "diff",
      "--cached",
      "--binary",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      ...(against ? [against] : []),
    ];
    const diff = await git(dir, args, env);
    if (!diff.ok) throw new Error(`git diff failed: ${diff.err.trim()}`);
    return diff.out;
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}
