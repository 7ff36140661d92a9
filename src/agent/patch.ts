/**
 * The patch a run produced: what changed in the workspace's git repository since the run began,
 * new files included. At the start (`recordBaseline`) the workspace's state — tracked files as
 * they are on disk and the untracked files git does not ignore — is written as a git tree into a
 * private object store; the patch is the diff from that tree to the work tree as it is now, so the
 * user's uncommitted edits before the run stay theirs and are not in it. Without a baseline (a
 * batch task's fresh clone) the patch is against HEAD or a base commit.
 *
 * Nothing is written into the repository: the indexes and object stores are Deft's own temp
 * folders (policy/git.ts `privateStoreEnv`; the repository's objects seen as an alternate), so the
 * user's staging area, refs and `.git/objects` are never touched. Git runs hardened (see
 * policy/git.ts): the repository's own filters, diff drivers, hooks and fsmonitor never run; with
 * a sandbox, every git command runs inside it too, the private folders its only writable places
 * besides the workspace. New files that no one would want in a patch are left out even without a
 * `.gitignore`: build and test droppings (`__pycache__/`, `*.pyc`, `node_modules/`, …), Deft's own
 * temp files, binary files above a small size and any file above a large one — at the start and at
 * the end alike, so a file left out of the baseline is never reported as the run's.
 */
import { dirname, join, resolve } from "node:path";
import {
  type GitResult,
  type GitSandbox,
  INDEX_PATCH_ARGS,
  privateStoreEnv,
  runGit,
} from "../policy/git.ts";
import { hiddenSocketDirs, SandboxUnavailableError } from "../policy/sandbox.ts";
import { isInside } from "../policy/workspace.ts";
import { isDropping } from "./droppings.ts";

/** New binary files up to this size still go into the patch (small fixtures, icons). */
export const MAX_NEW_BINARY_BYTES = 64 * 1024;

/** New files above this size never go into the patch (nor into the baseline's store). */
export const MAX_NEW_FILE_BYTES = 16 * 1024 * 1024;

/** How `workspacePatch` runs git. */
export interface PatchOptions {
  /** The commit to diff against (default HEAD); not with `baseline`. */
  base?: string;
  /** Diff against the workspace as it was when this was recorded (`recordBaseline`). */
  baseline?: WorkspaceBaseline;
  /** Run every git command in this sandbox (the tool settings' `sandbox`); default: none. */
  sandbox?: GitSandbox;
}

/**
 * The workspace's state at the start of a run: a tree in a private object store (`store`, a temp
 * folder removed by `dispose` or when Deft exits), and the index that lists it.
 */
export interface WorkspaceBaseline {
  /** The folder it was recorded in. */
  workspace: string;
  /** The tree object's id (in `store`/objects). */
  tree: string;
  /** The private folder: `objects/` and `index`. */
  store: string;
  /** Removes the store (idempotent). */
  dispose(): void;
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

/**
 * Records the state of `dir`'s work tree (tracked and untracked, not ignored) as a tree in a new
 * private object store; undefined when `dir` is not in a git repository. Throws when git fails.
 */
export async function recordBaseline(
  dir: string,
  options: { sandbox?: GitSandbox } = {},
): Promise<WorkspaceBaseline | undefined> {
  const sandbox = await shownSandbox(dir, options.sandbox);
  if (!await isGitRepo(dir, sandbox)) return undefined;
  const store = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-baseline-" }));
  const remove = () => {
    try {
      Deno.removeSync(store, { recursive: true });
    } catch { /* already gone */ }
    globalThis.removeEventListener("unload", remove);
  };
  // The store outlives this call (the run's end diffs against it): gone when Deft exits.
  globalThis.addEventListener("unload", remove);
  try {
    const git = gitIn(dir, sandbox && { ...sandbox, writablePaths: [store] });
    const repoObjects = await objectsOf(git);
    await Deno.mkdir(join(store, "objects"));
    const env = privateStoreEnv(join(store, "index"), join(store, "objects"), [repoObjects]);
    const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
    await must(git(hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env), "read-tree");
    await stageWorkTree(dir, git, env, store);
    const tree = (await must(git(["write-tree"], env), "write-tree")).out.trim();
    return { workspace: dir, tree, store, dispose: remove };
  } catch (e) {
    remove();
    throw e;
  }
}

/**
 * The diff of the work tree against `options.baseline` (else `options.base`, default HEAD),
 * untracked files included; "" outside a git repository.
 */
export async function workspacePatch(dir: string, options: PatchOptions = {}): Promise<string> {
  const shown = await shownSandbox(dir, options.sandbox);
  if (!await isGitRepo(dir, shown)) return "";
  const { baseline } = options;
  // Index, object store and path list in one private folder (mode 0700), bound writable inside
  // the sandbox, whose own /tmp is empty.
  const scratch = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-patch-" }));
  const writable = baseline ? [scratch, baseline.store] : [scratch];
  const git = gitIn(dir, shown && { ...shown, writablePaths: writable });
  try {
    const repoObjects = await objectsOf(git);
    const index = join(scratch, "index");
    const env = privateStoreEnv(
      index,
      join(scratch, "objects"),
      baseline ? [repoObjects, join(baseline.store, "objects")] : [repoObjects],
    );
    await Deno.mkdir(join(scratch, "objects"));
    let against: string | undefined;
    if (baseline) {
      // The baseline's index knows each file's size and time: only what changed is read again.
      // Its time is kept too: git tells a file changed within the same second by it.
      const original = join(baseline.store, "index");
      await Deno.copyFile(original, index);
      const { atime, mtime } = await Deno.stat(original);
      await Deno.utime(index, atime ?? new Date(), mtime ?? new Date(0));
      against = baseline.tree;
    } else {
      const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
      const read = hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"];
      await must(git(read, env), "read-tree");
      against = options.base ?? (hasHead ? "HEAD" : undefined);
    }
    await stageWorkTree(dir, git, env, scratch);
    const diff = await must(git([...INDEX_PATCH_ARGS, ...(against ? [against] : [])], env), "diff");
    return diff.out;
  } finally {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

type Git = (args: string[], env?: Record<string, string>) => Promise<GitResult>;

function gitIn(dir: string, sandbox: GitSandbox | undefined): Git {
  return (args, env = {}) => runGit(dir, args, { env, sandbox });
}

/** `sandbox` (none for mode `none`) with the git folders it would hide shown read-only. */
async function shownSandbox(
  dir: string,
  sandbox: GitSandbox | undefined,
): Promise<GitSandbox | undefined> {
  const confined = sandbox?.mode === "none" ? undefined : sandbox;
  return confined && { ...confined, readOnlyPaths: await hiddenGitDirs(dir, confined.workspace) };
}

/** The repository's object store, absolute. */
async function objectsOf(git: Git): Promise<string> {
  const objects = await must(
    git(["rev-parse", "--path-format=absolute", "--git-path", "objects"]),
    "rev-parse",
  );
  return objects.out.trim();
}

async function must(running: Promise<GitResult>, what: string): Promise<GitResult> {
  const result = await running;
  if (!result.ok) throw new Error(`git ${what} failed: ${result.err.trim()}`);
  return result;
}

/**
 * Brings the private index (`env`) up to the work tree below `dir`: changed and deleted files it
 * lists, then the new files git does not ignore (minus droppings and large files). `scratch` is a
 * private folder for the path list.
 */
async function stageWorkTree(
  dir: string,
  git: Git,
  env: Record<string, string>,
  scratch: string,
): Promise<void> {
  await must(git(["add", "-u", "."], env), "add");
  const fresh = await newFiles(dir, (args) => git(args, env));
  if (fresh.length === 0) return;
  const list = join(scratch, "paths");
  await Deno.writeTextFile(list, fresh.map((f) => `${f}\0`).join(""));
  await must(
    git(["add", "--pathspec-from-file", list, "--pathspec-file-nul", "--"], env),
    "add",
  );
  await Deno.remove(list);
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
 * Files the private index does not list and git does not ignore, minus droppings and large files
 * (paths from `dir`).
 */
async function newFiles(
  dir: string,
  git: (args: string[]) => Promise<GitResult>,
): Promise<string[]> {
  const listed = await git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."]);
  if (!listed.ok) throw new Error(`git ls-files failed: ${listed.err.trim()}`);
  const kept: string[] = [];
  for (const path of listed.out.split("\0")) {
    if (path === "" || isDropping(path)) continue;
    if (await isTooLarge(`${dir}/${path}`)) continue;
    kept.push(path);
  }
  return kept;
}

/** A regular file above MAX_NEW_FILE_BYTES, or a binary one above MAX_NEW_BINARY_BYTES. */
async function isTooLarge(path: string): Promise<boolean> {
  let file: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size <= MAX_NEW_BINARY_BYTES) return false;
    if (info.size > MAX_NEW_FILE_BYTES) return true;
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
