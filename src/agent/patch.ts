/**
 * The patch a run produced: every change against HEAD (or a base commit) in the workspace's git
 * repository, including new files that git does not track yet. Building it writes nothing into the
 * repository: a throwaway index and a throwaway object store (the repository's own objects seen
 * through `GIT_ALTERNATE_OBJECT_DIRECTORIES`) live in one private temp folder, removed afterwards,
 * so the user's staging area and `.git/objects` are never touched. Git runs hardened (see
 * policy/git.ts): the repository's own filters, diff drivers, hooks and fsmonitor never run; with
 * a sandbox, every git command runs inside it too, that temp folder its only writable place besides
 * the workspace. New files that no one would want in a patch are left out even without a
 * `.gitignore`: build and test droppings (`__pycache__/`, `*.pyc`, `node_modules/`, …), Deft's own
 * temp files, and binary files above a small size.
 */
import { dirname, join, resolve } from "node:path";
import { type GitResult, type GitSandbox, INDEX_PATCH_ARGS, runGit } from "../policy/git.ts";
import { hiddenSocketDirs, SandboxUnavailableError } from "../policy/sandbox.ts";
import { isInside } from "../policy/workspace.ts";
import { isDropping } from "./droppings.ts";

/** New binary files up to this size still go into the patch (small fixtures, icons). */
export const MAX_NEW_BINARY_BYTES = 64 * 1024;

/** How `workspacePatch` runs git. */
export interface PatchOptions {
  /** The commit to diff against (default HEAD). */
  base?: string;
  /** Run every git command in this sandbox (the tool settings' `sandbox`); default: none. */
  sandbox?: GitSandbox;
}

/** True when `dir` is inside a git work tree. Throws only when the sandbox asked for is missing. */
export async function isGitRepo(dir: string, sandbox?: GitSandbox): Promise<boolean> {
  try {
    const r = await runGit(dir, ["rev-parse", "--is-inside-work-tree"], { sandbox });
    return r.ok && r.out.trim() === "true";
  } catch (e) {
    if (e instanceof SandboxUnavailableError) throw e;
    return false;
  }
}

/** The diff of the work tree against `options.base` (default HEAD), untracked files included. */
export async function workspacePatch(dir: string, options: PatchOptions = {}): Promise<string> {
  const confined = options.sandbox?.mode === "none" ? undefined : options.sandbox;
  const shown = confined && {
    ...confined,
    readOnlyPaths: await hiddenGitDirs(dir, confined.workspace),
  };
  if (!await isGitRepo(dir, shown)) return "";
  // Index, object store and path list in one private folder (mode 0700), bound writable inside
  // the sandbox, whose own /tmp is empty.
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-patch-" }));
  const sandbox = shown && { ...shown, writablePaths: [scratch] };
  const git = (args: string[], env: Record<string, string> = {}) =>
    runGit(dir, args, { env, sandbox });
  try {
    const objects = await git(["rev-parse", "--git-path", "objects"]);
    if (!objects.ok) throw new Error(`git rev-parse failed: ${objects.err.trim()}`);
    const env = {
      GIT_INDEX_FILE: join(scratch, "index"),
      GIT_OBJECT_DIRECTORY: join(scratch, "objects"),
      GIT_ALTERNATE_OBJECT_DIRECTORIES: alternatePath(resolve(dir, objects.out.trim())),
    };
    await Deno.mkdir(env.GIT_OBJECT_DIRECTORY);
    const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
    const read = await git(hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env);
    if (!read.ok) throw new Error(`git read-tree failed: ${read.err.trim()}`);
    const updated = await git(["add", "-u", "."], env);
    if (!updated.ok) throw new Error(`git add failed: ${updated.err.trim()}`);
    const fresh = await newFiles(dir, git);
    if (fresh.length > 0) {
      const list = join(scratch, "paths");
      await Deno.writeTextFile(list, fresh.map((f) => `${f}\0`).join(""));
      const added = await git(
        ["add", "--pathspec-from-file", list, "--pathspec-file-nul", "--"],
        env,
      );
      if (!added.ok) throw new Error(`git add failed: ${added.err.trim()}`);
    }
    const against = options.base ?? (hasHead ? "HEAD" : undefined);
    const args = [...INDEX_PATCH_ARGS, ...(against ? [against] : [])];
    const diff = await git(args, env);
    if (!diff.ok) throw new Error(`git diff failed: ${diff.err.trim()}`);
    return diff.out;
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

/**
 * The repository's git folders outside the workspace that the sandbox would hide (it has its own
 * /tmp): the `.git` of a repository the workspace is a subfolder of, or the folders a `.git` file
 * points to (a linked worktree's). Found by walking up from `dir`, without git. None is shown that
 * is or holds /tmp or a place where host services keep sockets (a `.git` file in the workspace is
 * the model's to write).
 */
async function hiddenGitDirs(dir: string, workspace: string): Promise<string[]> {
  let top = resolve(dir);
  while (!await exists(join(top, ".git"))) {
    if (top === dirname(top)) return [];
    top = dirname(top);
  }
  const dotGit = join(top, ".git");
  const dirs = [dotGit];
  const pointer = /^gitdir: (.+)$/m.exec(await Deno.readTextFile(dotGit).catch(() => ""))?.[1];
  if (pointer) {
    const gitDir = resolve(top, pointer.trim());
    const common = await Deno.readTextFile(join(gitDir, "commondir")).catch(() => undefined);
    dirs.push(gitDir, ...(common ? [resolve(gitDir, common.trim())] : []));
  }
  const hidden = ["/tmp", ...hiddenSocketDirs()];
  const shown: string[] = [];
  for (const path of dirs) {
    if (isInside(workspace, path) || hidden.some((h) => isInside(path, h))) continue;
    if (await exists(path)) shown.push(path);
  }
  return shown;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/**
 * `path` as one entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES`, a colon-separated list: a path with
 * a colon (or starting with a quote) is written C-quoted, which git reads back as one entry.
 */
function alternatePath(path: string): string {
  if (!/[:"\\]/.test(path)) return path;
  return `"${path.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** Untracked files git does not ignore, minus droppings and large binaries (paths from `dir`). */
async function newFiles(
  dir: string,
  git: (args: string[]) => Promise<GitResult>,
): Promise<string[]> {
  const listed = await git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."]);
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
