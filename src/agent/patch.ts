/**
 * The patch a run produced: every change against HEAD (or a base commit) in the workspace's git
 * repository, including new files that git does not track yet. A throwaway index is used, so the
 * user's staging area is never touched.
 */
import { TEMP_PATHSPEC_EXCLUDES } from "../tools/fs/temp_files.ts";

async function git(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ ok: boolean; out: string; err: string }> {
  const result = await new Deno.Command("git", {
    args,
    cwd,
    env: { GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    ok: result.success,
    out: decoder.decode(result.stdout),
    err: decoder.decode(result.stderr),
  };
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
    // Temporary files of writes under way (or killed) are never part of the work.
    const added = await git(dir, ["add", "-A", "--", ".", ...TEMP_PATHSPEC_EXCLUDES], env);
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
      ...(against ? [against] : []),
    ];
    const diff = await git(dir, args, env);
    if (!diff.ok) throw new Error(`git diff failed: ${diff.err.trim()}`);
    return diff.out;
  } finally {
    await Deno.remove(index).catch(() => {});
  }
}
