/**
 * The patch a run produced: every change against HEAD (or a base commit) in the workspace's git
 * repository, including new files that git does not track yet. A throwaway index is used, so the
 * user's staging area is never touched. Git runs hardened (see policy/git.ts): the repository's
 * own filters, diff drivers, hooks and fsmonitor never run. New files that no one would want in a
 * patch are left out even without a `.gitignore`: build and test droppings (`__pycache__/`,
 * `*.pyc`, `node_modules/`, …), Deft's own temp files, and binary files above a small size.
 */
import { type GitResult, runGit } from "../policy/git.ts";
import { isDropping } from "./droppings.ts";

/** New binary files up to this size still go into the patch (small fixtures, icons). */
export const MAX_NEW_BINARY_BYTES = 64 * 1024;

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
    const updated = await git(dir, ["add", "-u", "."], env);
    if (!updated.ok) throw new Error(`git add failed: ${updated.err.trim()}`);
    const fresh = await newFiles(dir);
    if (fresh.length > 0) {
      const list = await Deno.makeTempFile({ prefix: "deft-paths-" });
      try {
        await Deno.writeTextFile(list, fresh.map((f) => `${f}\0`).join(""));
        const added = await git(
          dir,
          ["add", "--pathspec-from-file", list, "--pathspec-file-nul", "--"],
          env,
        );
        if (!added.ok) throw new Error(`git add failed: ${added.err.trim()}`);
      } finally {
        await Deno.remove(list).catch(() => {});
      }
    }
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

/** Untracked files git does not ignore, minus droppings and large binaries (paths from `dir`). */
async function newFiles(dir: string): Promise<string[]> {
  const listed = await git(dir, ["ls-files", "-z", "--others", "--exclude-standard", "--", "."]);
  if (!listed.ok) throw new Error(`git ls-files failed: ${listed.err.trim()}`);
  const kept: string[] = [];
  for (const path of listed.out.split("\0")) {
    if (path === "" || isDropping(path)) continue;
    if (await isLargeBinary(`${dir}/${path}`)) continue;
    kept.push(path);
  }
  return kept;
}

async function isLargeBinary(path: string): Promise<boolean> {
  let file: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size <= MAX_NEW_BINARY_BYTES) return false;
    file = await Deno.open(path);
    const head = new Uint8Array(8000);
    const n = (await file.read(head)) ?? 0;
    return head.subarray(0, n).includes(0);
  } catch {
    return false;
  } finally {
    file?.close();
  }
}
