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
 *
 * One algorithm for the host and a container: it runs over a `GitPlace` (policy/git.ts) —
 * `hostPlace` here, `containerPlace` in src/container/patch.ts — so every filter applies in both.
 * Every git call has a deadline and bounded output; a `.gitignore` or `.gitattributes` that is a
 * FIFO or device (git would wait on it forever) stops the patch with an error naming it, before
 * git opens it. File names are handled as bytes: a name that is not UTF-8 is kept as it is.
 */
import { dirname, join, resolve } from "node:path";
import {
  GitLimitError,
  type GitLimits,
  type GitPlace,
  type GitResult,
  type GitSandbox,
  gitScratch,
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
  /** Each git command's deadline and output limit (defaults in policy/git.ts). */
  limits?: GitLimits;
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
  /** The private folder (where it was recorded: the host, or inside a container): `objects/` and `index`. */
  store: string;
  /** Removes the store (idempotent); a store inside a container is gone when this resolves. */
  dispose(): void | Promise<void>;
}

/** The patch could not be computed: a run says so, and never passes it off as an empty patch. */
export class PatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PatchError";
  }
}

/** True when `dir` is inside a git work tree. Throws only when the sandbox asked for is missing. */
export async function isGitRepo(dir: string, sandbox?: GitSandbox): Promise<boolean> {
  try {
    // As the baseline and patch see it (the git folders the sandbox hides shown), so the same
    // long-lived sandbox answers all three.
    const place = await hostPlace(dir, sandbox, undefined);
    const r = await place.git(["rev-parse", "--is-inside-work-tree"]);
    return r.ok && r.out.trim() === "true";
  } catch (e) {
    // A git Deft had to stop is not an answer: say so rather than "not a repository".
    if (e instanceof SandboxUnavailableError || e instanceof GitLimitError) throw e;
    return false;
  }
}

/**
 * Records the state of `dir`'s work tree (tracked and untracked, not ignored) as a tree in a new
 * private object store; undefined when `dir` is not in a git repository. Throws when git fails.
 */
export async function recordBaseline(
  dir: string,
  options: { sandbox?: GitSandbox; limits?: GitLimits } = {},
): Promise<WorkspaceBaseline | undefined> {
  const place = await hostPlace(dir, options.sandbox, options.limits);
  const facts = await repoFacts(place);
  if (!facts) return undefined;
  const store = await place.scratch("baseline");
  const remove = () => {
    try {
      Deno.removeSync(store, { recursive: true });
    } catch { /* already gone */ }
    globalThis.removeEventListener("unload", remove);
  };
  // The store outlives this call (the run's end diffs against it): gone when Deft exits.
  globalThis.addEventListener("unload", remove);
  try {
    const tree = await recordTree(place, store, facts);
    return { workspace: dir, tree, store, dispose: remove };
  } catch (e) {
    remove();
    throw e;
  }
}

/**
 * `recordBaseline` in any place (a container's: see src/container/patch.ts); undefined when its
 * workspace is not in a repository. `dispose` removes the store there.
 */
export async function recordBaselineIn(
  place: GitPlace,
  workspace: string,
): Promise<WorkspaceBaseline | undefined> {
  const facts = await repoFacts(place);
  if (!facts) return undefined;
  const store = await place.scratch("baseline");
  let gone: Promise<void> | undefined;
  const dispose = () => gone ??= place.remove(store).catch(() => {});
  try {
    return { workspace, tree: await recordTree(place, store, facts), store, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * The diff of the work tree against `options.baseline` (else `options.base`, default HEAD),
 * untracked files included; "" outside a git repository. Throws (PatchError, GitLimitError) when
 * it cannot be computed.
 */
export async function workspacePatch(dir: string, options: PatchOptions = {}): Promise<string> {
  const place = await hostPlace(dir, options.sandbox, options.limits, options.baseline?.store);
  return await patchIn(place, options);
}

/** `workspacePatch` in any place (a container's: see src/container/patch.ts). */
export async function patchIn(
  place: GitPlace,
  options: { base?: string; baseline?: WorkspaceBaseline } = {},
): Promise<string> {
  const facts = await repoFacts(place);
  if (!facts) return "";
  const { baseline } = options;
  const scratch = await place.scratch("patch");
  try {
    const repoObjects = facts.objects;
    const index = `${scratch}/index`;
    const env = privateStoreEnv(
      index,
      `${scratch}/objects`,
      baseline ? [repoObjects, `${baseline.store}/objects`] : [repoObjects],
    );
    let against: string | undefined;
    if (baseline) {
      // The baseline's index knows each file's size and time: only what changed is read again.
      await place.copyIndex(`${baseline.store}/index`, index);
      against = baseline.tree;
    } else {
      const hasHead = await readHead(place, env);
      against = options.base ?? (hasHead ? "HEAD" : undefined);
    }
    await stageWorkTree(place, env, facts);
    const diffArgs = [...INDEX_PATCH_ARGS, ...(against ? [against] : [])];
    const diff = await must(place.git(diffArgs, env), "diff");
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(diff.bytes);
    } catch {
      // A name that is not UTF-8 would not survive decoding: let git quote names instead.
      const quotedArgs = diffArgs.map((a) =>
        a === "core.quotepath=false" ? "core.quotepath=true" : a
      );
      const quoted = await must(place.git(quotedArgs, env), "diff");
      return quoted.out;
    }
  } finally {
    await place.remove(scratch);
  }
}

/** What one `git rev-parse` tells about the place's repository (see `repoFacts`). */
interface RepoFacts {
  /** The repository's object store, absolute. */
  objects: string;
  /** git's own ignore and attributes lists (`info/exclude`, `info/attributes`), absolute. */
  infoFiles: string[];
}

/**
 * Whether the place's workspace is in a git work tree, and where that repository keeps its objects
 * and its own ignore and attributes lists: one git command for what took three. Undefined outside
 * a work tree; a stopped git throws.
 */
async function repoFacts(place: GitPlace): Promise<RepoFacts | undefined> {
  const r = await place.git([
    "rev-parse",
    "--is-inside-work-tree",
    "--path-format=absolute",
    "--git-path",
    "objects",
    "--git-path",
    "info/exclude",
    "--git-path",
    "info/attributes",
  ]);
  const lines = r.out.split("\n");
  if (!r.ok || lines[0] !== "true" || lines.length < 4) return undefined;
  return { objects: lines[1], infoFiles: lines.slice(2, 4).filter(Boolean) };
}

/**
 * Fills the private index (`env`) from HEAD, or leaves it empty in a repository with no commit
 * yet; true when there is a HEAD. One command when there is one (the usual case).
 */
async function readHead(place: GitPlace, env: Record<string, string>): Promise<boolean> {
  const read = await place.git(["read-tree", "HEAD"], env);
  if (read.ok) return true;
  // No HEAD (a fresh repository) is the one failure that means "start empty".
  if ((await place.git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok) {
    throw new PatchError(`git read-tree failed: ${read.err.trim()}`);
  }
  await must(place.git(["read-tree", "--empty"], env), "read-tree");
  return false;
}

/** Writes the work tree's state as a tree into `store` (a place's scratch folder); its id. */
async function recordTree(place: GitPlace, store: string, facts: RepoFacts): Promise<string> {
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [facts.objects]);
  await readHead(place, env);
  await stageWorkTree(place, env, facts);
  return (await must(place.git(["write-tree"], env), "write-tree")).out.trim();
}

/** Config that makes a checkpoint's files go in and come back byte for byte, links as links. */
const EXACT_FILES = [
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.safecrlf=false",
  "-c",
  "core.symlinks=true",
  "-c",
  "core.filemode=true",
];

/** A checkpoint written into a lasting store: its tree, and the new files it does not hold. */
export interface CheckpointTree {
  tree: string;
  /** New files left out as the patch leaves them out (large, or binary above a small size). */
  leftOut: string[];
}

/**
 * Writes the work tree's state (as `recordBaseline` does) as a tree into `store`, a lasting folder
 * with `objects/` whose `index` is kept between checkpoints, so only changed files are read again.
 */
export async function recordCheckpointIn(place: GitPlace, store: string): Promise<CheckpointTree> {
  const facts = await repoFacts(place);
  if (!facts) {
    throw new PatchError(`git rev-parse failed: ${place.where} is not in a git work tree`);
  }
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [facts.objects]);
  const exact: GitPlace = { ...place, git: (a, e, i) => place.git([...EXACT_FILES, ...a], e, i) };
  // A new store's index starts from HEAD; a kept one already lists the last checkpoint.
  const listed = await must(
    exact.git(["ls-files", "-z", "--cached", "--", ":(top)"], env),
    "ls-files",
  );
  if (listed.bytes.length === 0) await readHead(exact, env);
  const leftOut = await stageWorkTree(exact, env, facts);
  const tree = (await must(exact.git(["write-tree"], env), "write-tree")).out.trim();
  return { tree, leftOut };
}

/**
 * The files (paths from the repository's top) that differ between two trees in `store`.
 */
export async function changedBetween(
  place: GitPlace,
  store: string,
  from: string,
  to: string,
): Promise<string[]> {
  const repoObjects = await objectsOf(place);
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [repoObjects]);
  const r = await must(
    place.git(["diff-tree", "-r", "-z", "--name-only", "--no-renames", from, to], env),
    "diff-tree",
  );
  return splitNul(r.bytes).map((name) => new TextDecoder().decode(name));
}

/**
 * Brings the work tree from checkpoint `current` (just recorded: the store's index matches the
 * work tree) to checkpoint `target`: git's two-tree read-tree, which writes changed files, brings
 * deleted ones back and removes files `target` does not have; symlinks are restored as links and
 * git never writes through a symlinked folder. Files neither tree holds are left alone; git stops
 * (and nothing is overwritten) when one stands where `target` has a file.
 */
export async function restoreCheckpointIn(
  place: GitPlace,
  store: string,
  current: string,
  target: string,
): Promise<void> {
  const repoObjects = await objectsOf(place);
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [repoObjects]);
  await must(
    place.git([...EXACT_FILES, "read-tree", "-m", "-u", current, target], env),
    "read-tree",
  );
}

/** The size in bytes of `store`'s objects (git count-objects). */
export async function storeBytes(place: GitPlace, store: string): Promise<number> {
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, []);
  const r = await must(place.git(["count-objects", "-v"], env), "count-objects");
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, "m").exec(r.out)?.[1] ?? 0);
  return (kib("size") + kib("size-pack")) * 1024;
}

/** The host as a place for a lasting checkpoint store (`store` writable to git in the sandbox). */
export function checkpointHostPlace(
  dir: string,
  store: string,
  sandbox?: GitSandbox,
  limits?: GitLimits,
): Promise<GitPlace> {
  return hostPlace(dir, sandbox, limits, store);
}

/** The repository's object store, absolute. */
async function objectsOf(place: GitPlace): Promise<string> {
  const objects = await must(
    place.git(["rev-parse", "--path-format=absolute", "--git-path", "objects"]),
    "rev-parse",
  );
  return objects.out.trim();
}

async function must(running: Promise<GitResult>, what: string): Promise<GitResult> {
  const result = await running;
  if (!result.ok) throw new PatchError(`git ${what} failed: ${result.err.trim()}`);
  return result;
}

/**
 * Brings the private index (`env`) up to the work tree: changed and deleted files it lists, then
 * the new files git does not ignore (minus droppings and large files). First, no ignore or
 * attributes file git would open may be a FIFO or a device.
 */
async function stageWorkTree(
  place: GitPlace,
  env: Record<string, string>,
  facts: RepoFacts,
): Promise<string[]> {
  await refuseSpecialFiles(place, facts);
  await must(place.git(["add", "-u", "."], env), "add");
  const listed = await must(
    place.git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], env),
    "ls-files",
  );
  const names = splitNul(listed.bytes);
  const decoder = new TextDecoder();
  const candidates = names.filter((name) => !isDropping(decoder.decode(name)));
  const large = await place.largeFiles(candidates, {
    binaryOver: MAX_NEW_BINARY_BYTES,
    anyOver: MAX_NEW_FILE_BYTES,
  });
  const fresh = candidates.filter((_, i) => !large[i]);
  const left = candidates.filter((_, i) => large[i]).map((name) => decoder.decode(name));
  if (fresh.length === 0) return left;
  // The list goes in on stdin, as bytes: no file, no path on a command line, no name re-encoded.
  await must(
    place.git(
      ["add", "--pathspec-from-file=-", "--pathspec-file-nul", "--"],
      env,
      joinNul(fresh),
    ),
    "add",
  );
  return left;
}

/** Throws a PatchError naming each ignore or attributes file that is not a regular file. */
async function refuseSpecialFiles(place: GitPlace, facts: RepoFacts): Promise<void> {
  const special = await place.specialFiles(facts.infoFiles);
  if (special.length === 0) return;
  throw new PatchError(
    `the patch cannot be computed in ${place.where}: ${special.join(", ")} ` +
      `${special.length === 1 ? "is not a regular file" : "are not regular files"} (a FIFO or ` +
      "device), and git would wait on it for ever. Remove it (or make it a plain file) and " +
      "compute the patch again.",
  );
}

function splitNul(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) continue;
    if (i > start) parts.push(bytes.subarray(start, i));
    start = i + 1;
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts;
}

function joinNul(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length + 1;
  }
  return all;
}

/**
 * The host as a place: git in `dir` (inside `sandbox` unless its mode is `none`, with the git
 * folders the sandbox would hide shown read-only), scratch folders in Deft's temp folder (mode
 * 0700), each one writable to the git calls after it, as is `store` (a baseline's).
 */
async function hostPlace(
  dir: string,
  sandbox: GitSandbox | undefined,
  limits: GitLimits | undefined,
  store?: string,
): Promise<GitPlace> {
  const shown = await shownSandbox(dir, sandbox);
  const writable: string[] = store ? [store] : [];
  return {
    where: dir,
    git: (args, env = {}, stdin) =>
      runGit(dir, args, {
        env,
        stdin,
        limits,
        sandbox: shown && { ...shown, writablePaths: [...writable] },
      }),
    async scratch(kind) {
      // In a sandbox: inside the view's own folder, which its git runner may already write.
      const folder = await gitScratch(shown, kind);
      writable.push(folder);
      return folder;
    },
    async remove(folder) {
      await Deno.remove(folder, { recursive: true }).catch(() => {});
    },
    async copyIndex(from, to) {
      await Deno.copyFile(from, to);
      const { atime, mtime } = await Deno.stat(from);
      await Deno.utime(to, atime ?? new Date(), mtime ?? new Date(0));
    },
    async largeFiles(paths, sizes) {
      const large: boolean[] = [];
      for (const path of paths) large.push(await isTooLarge(dir, path, sizes));
      return large;
    },
    specialFiles: (extra) => hostSpecialFiles(dir, extra),
  };
}

/** `sandbox` (none for mode `none`) with the git folders it would hide shown read-only. */
async function shownSandbox(
  dir: string,
  sandbox: GitSandbox | undefined,
): Promise<GitSandbox | undefined> {
  const confined = sandbox?.mode === "none" ? undefined : sandbox;
  return confined && { ...confined, readOnlyPaths: await hiddenGitDirs(dir, confined.workspace) };
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
  const pointer = /^gitdir: (.+)$/m.exec(await readRegular(dotGit) ?? "")?.[1];
  if (pointer) {
    const gitDir = resolve(top, pointer.trim());
    const common = await readRegular(join(gitDir, "commondir"));
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

/** The text of `path` when it is a regular file (never a FIFO, which would block the read). */
async function readRegular(path: string): Promise<string | undefined> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (!info?.isFile) return undefined;
  return await Deno.readTextFile(path).catch(() => undefined);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

const IGNORE_AND_ATTRIBUTES = new Set([".gitignore", ".gitattributes"]);

/**
 * The `.gitignore` and `.gitattributes` below `dir` (and in the folders above it, up to the
 * repository's top, which git reads too) that are neither regular files nor symlinks (git opens no
 * symlinked one), and the files of `extra` that exist and are not regular files. Walked by reading
 * folders, never by opening a file; `.git` folders are not entered.
 */
async function hostSpecialFiles(dir: string, extra: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(folder));
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory) {
        if (entry.name !== ".git") await walk(path);
      } else if (
        IGNORE_AND_ATTRIBUTES.has(entry.name) && !entry.isFile && !entry.isSymlink
      ) {
        found.push(path);
      }
    }
  };
  await walk(dir);
  let above = resolve(dir);
  while (!await exists(join(above, ".git")) && above !== dirname(above)) {
    above = dirname(above);
    for (const name of IGNORE_AND_ATTRIBUTES) {
      const info = await Deno.lstat(join(above, name)).catch(() => undefined);
      if (info && !info.isFile && !info.isSymlink && !info.isDirectory) {
        found.push(join(above, name));
      }
    }
  }
  for (const path of extra) {
    // git follows a symlink here: what it leads to counts.
    const info = await Deno.stat(path).catch(() => undefined);
    if (info && !info.isFile && !info.isDirectory) found.push(path);
  }
  return found;
}

/**
 * True for a regular file above `anyOver` bytes, or above `binaryOver` with a NUL in its first
 * 8000 bytes. `name` is bytes from git; a name Deno cannot spell (not UTF-8) is not measured, and
 * goes in.
 */
async function isTooLarge(
  dir: string,
  name: Uint8Array,
  sizes: { binaryOver: number; anyOver: number },
): Promise<boolean> {
  let path: string;
  try {
    path = `${dir}/${new TextDecoder("utf-8", { fatal: true }).decode(name)}`;
  } catch {
    return false;
  }
  let file: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || info.size <= sizes.binaryOver) return false;
    if (info.size > sizes.anyOver) return true;
    // Opened by name after lstat: a FIFO swapped in at that instant would block here. At the end
    // of a run the model's processes are gone; mid-run (--must-patch's check) the window stays.
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
