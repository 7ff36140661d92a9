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
 * `hostPlace` in ./host_place.ts, `containerPlace` in src/container/patch.ts — so every filter
 * applies in both. Every git call has a deadline and bounded output; a `.gitignore` or
 * `.gitattributes` that is a FIFO or device (git would wait on it forever) stops the patch with an
 * error naming it, before git opens it. A file above MAX_FILE_BYTES, tracked or new, is never
 * read, and the patch says so in its first lines. File names are handled as bytes: a name that is
 * not UTF-8 is kept as it is.
 */
import {
  GitLimitError,
  type GitLimits,
  type GitPlace,
  type GitResult,
  type GitSandbox,
  INDEX_PATCH_ARGS,
  privateStoreEnv,
  splitNul,
} from "../policy/git.ts";
import { SandboxUnavailableError } from "../policy/sandbox.ts";
import { isDropping } from "./droppings.ts";
import { hostPlace } from "./host_place.ts";

/** New binary files up to this size still go into the patch (small fixtures, icons). */
export const MAX_NEW_BINARY_BYTES = 64 * 1024;

/** New files above this size never go into the patch (nor into the baseline's store). */
export const MAX_NEW_FILE_BYTES = 16 * 1024 * 1024;

/**
 * No file above this size is read at all, tracked ones included: git would hash (and compress)
 * every byte of it for each checkpoint, the baseline and the patch — a tracked file grown to a
 * 4 GB sparse file kept a run from ending for minutes. Such a file is left out, and each says so:
 * the patch in a line before its diffs, a checkpoint in its record (`left_out`), a rewind in what
 * it could not restore. 256 MiB is generous: two and a half times the largest file GitHub takes
 * in a push (100 MiB), and git hashes and compresses it in a few seconds.
 */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;

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
  const facts = await repositoryFacts(place);
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
  const facts = await repositoryFacts(place);
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
  const facts = await repositoryFacts(place);
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
    const { tooLarge } = await stageWorkTree(place, env, facts, { readFromTree: !baseline });
    const said = leftOutLines(tooLarge);
    const diffArgs = [...INDEX_PATCH_ARGS, ...(against ? [against] : [])];
    const diff = await must(place.git(diffArgs, env), "diff");
    try {
      return said + new TextDecoder("utf-8", { fatal: true }).decode(diff.bytes);
    } catch {
      // A name that is not UTF-8 would not survive decoding: let git quote names instead.
      const quotedArgs = diffArgs.map((a) =>
        a === "core.quotepath=false" ? "core.quotepath=true" : a
      );
      const quoted = await must(place.git(quotedArgs, env), "diff");
      return said + quoted.out;
    }
  } finally {
    await place.remove(scratch);
  }
}

/** What one `git rev-parse` tells about the place's repository (see `repositoryFacts`). */
export interface RepoFacts {
  /** The repository's object store, absolute. */
  objects: string;
  /** git's own ignore and attributes lists (`info/exclude`, `info/attributes`), absolute. */
  infoFiles: string[];
  /** Its object format (`sha1`, `sha256`). */
  format: string;
  /** HEAD's tree when it was asked, undefined when there is no commit yet. */
  head?: string;
}

/**
 * Whether the place's workspace is in a git work tree, and where that repository keeps its objects
 * and its own ignore and attributes lists, its object format and HEAD's tree: one git command
 * (`rev-parse` lists no config) for what took four. Undefined outside a work tree; a stopped git
 * throws.
 */
export async function repositoryFacts(place: GitPlace): Promise<RepoFacts | undefined> {
  const r = await place.git([
    "rev-parse",
    "--is-inside-work-tree",
    "--show-object-format",
    "--path-format=absolute",
    "--git-path",
    "objects",
    "--git-path",
    "info/exclude",
    "--git-path",
    "info/attributes",
    // Last: an unborn HEAD prints nothing here, and nothing after it would be printed.
    "--revs-only",
    "HEAD^{tree}",
  ]);
  const lines = r.out.split("\n");
  if (!r.ok || lines[0] !== "true" || lines.length < 5) return undefined;
  const head = /^[0-9a-f]{40,64}$/.test(lines[5] ?? "") ? lines[5] : undefined;
  return {
    format: lines[1],
    objects: lines[2],
    infoFiles: lines.slice(3, 5).filter(Boolean),
    ...(head && { head }),
  };
}

/**
 * Fills the private index (`env`) from HEAD, or leaves it empty in a repository with no commit
 * yet; true when there is a HEAD. One command when there is one (the usual case).
 */
export async function readHead(place: GitPlace, env: Record<string, string>): Promise<boolean> {
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
  await stageWorkTree(place, env, facts, { readFromTree: true });
  return (await must(place.git(["write-tree"], env), "write-tree")).out.trim();
}

export async function must(running: Promise<GitResult>, what: string): Promise<GitResult> {
  const result = await running;
  if (!result.ok) throw new PatchError(`git ${what} failed: ${result.err.trim()}`);
  return result;
}

/**
 * Brings the private index (`env`) up to the work tree: changed and deleted files it lists, then
 * the new files git does not ignore (minus droppings and large files). First, no ignore or
 * attributes file git would open may be a FIFO or a device.
 */
export async function stageWorkTree(
  place: GitPlace,
  env: Record<string, string>,
  facts: RepoFacts,
  { gate, admit, readFromTree = false, checked = false, overlay }: StageOptions = {},
): Promise<Staged> {
  if (!checked) await refuseSpecialFiles(place, facts);
  const { candidates, others } = readFromTree || overlay !== undefined
    ? await listFresh(place, env, overlay)
    : await listChanged(place, env);
  // Those above MAX_FILE_BYTES are not read at all, and keep what the index had.
  const over = await place.filesOver(candidates, MAX_FILE_BYTES);
  const tooLarge = candidates.filter((_, i) => over[i]).map((name) => decoder.decode(name));
  // An index that only stood for `overlay` holds it now: those files keep the tree's entries.
  if (overlay !== undefined && tooLarge.length > 0) {
    await gate;
    await must(place.git(["read-tree", overlay], env), "read-tree");
  }
  const newFiles = others.filter((name) => !isDropping(decoder.decode(name)));
  const large = await place.largeFiles(newFiles, {
    binaryOver: MAX_NEW_BINARY_BYTES,
    anyOver: MAX_NEW_FILE_BYTES,
  });
  const left = newFiles.filter((_, i) => large[i]).map((name) => decoder.decode(name));
  const fresh = newFiles.filter((_, i) => !large[i]);
  await gate;
  const paths = [...candidates.filter((_, i) => !over[i]), ...fresh];
  const readIn = overlay !== undefined && tooLarge.length > 0;
  if (paths.length === 0) return { left, tooLarge, staged: readIn };
  await admit?.(paths);
  // One write of the index for all of them, as `git add -A` would: a changed file is hashed
  // again, a gone one removed, a new one added (a file where a folder was replaces it). The
  // names go in on stdin, as bytes: plain paths (no pathspec magic), none re-encoded.
  const update = (names: Uint8Array[]) =>
    place.git(
      ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
      env,
      joinNul(names),
    );
  if ((await update(paths)).ok) return { left, tooLarge, staged: true };
  // update-index refuses a tracked file now beyond a symlink (its folder became a link) and
  // writes nothing; `add -u` removes such a file. Then the new files.
  if (overlay !== undefined && tooLarge.length === 0) {
    await must(place.git(["read-tree", overlay], env), "read-tree");
  }
  const exclude = encoder.encode(":(exclude,literal)");
  const skipped = candidates.filter((_, i) => over[i]);
  await must(
    place.git(
      ["add", "-u", "--pathspec-from-file=-", "--pathspec-file-nul"],
      env,
      joinNul([encoder.encode("."), ...skipped.map((name) => concat(exclude, name))]),
    ),
    "add",
  );
  if (fresh.length > 0) await must(update(fresh), "update-index");
  return { left, tooLarge, staged: true };
}

/**
 * Two listings in which git reads no file, side by side: the tracked files whose size or time
 * changed (or which went) — by their stat alone, never their bytes (`ls-files -m` would hash a
 * tracked empty file grown to gigabytes) — and the new files git does not ignore.
 */
async function listChanged(
  place: GitPlace,
  env: Record<string, string>,
): Promise<{ candidates: Uint8Array[]; others: Uint8Array[] }> {
  const [changed, listed] = await Promise.all([
    must(
      place.git(["diff-files", "-z", "--name-only", "--relative", "--", "."], env),
      "diff-files",
    ),
    must(
      place.git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], env),
      "ls-files",
    ),
  ]);
  return { candidates: splitNul(changed.bytes), others: splitNul(listed.bytes) };
}

/**
 * For an index just read from a tree, or an empty one that `overlay` (a tree) stands for (no
 * file's stat known, so every tracked file is to be read again): one listing of the tracked files
 * (from the index, or the tree, alone) and the new files git does not ignore, told apart by
 * `ls-files -t` (`? ` marks a new one).
 */
async function listFresh(
  place: GitPlace,
  env: Record<string, string>,
  overlay?: string,
): Promise<{ candidates: Uint8Array[]; others: Uint8Array[] }> {
  const withTree = overlay === undefined ? [] : [`--with-tree=${overlay}`];
  const listed = await must(
    place.git(
      [
        "ls-files",
        "-z",
        "-t",
        "--cached",
        "--others",
        "--exclude-standard",
        ...withTree,
        "--",
        ".",
      ],
      env,
    ),
    "ls-files",
  );
  const candidates: Uint8Array[] = [];
  const others: Uint8Array[] = [];
  for (const entry of splitNul(listed.bytes)) {
    (entry[0] === 0x3f ? others : candidates).push(entry.subarray(2));
  }
  return { candidates, others };
}

const encoder = new TextEncoder();
function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const all = new Uint8Array(a.length + b.length);
  all.set(a);
  all.set(b, a.length);
  return all;
}

const decoder = new TextDecoder();

/** How `stageWorkTree` goes about it. */
export interface StageOptions {
  /** Awaited before anything is written into the index or the object store. */
  gate?: Promise<unknown>;
  /** Awaited with the names about to be read into the store, before any is (it may refuse). */
  admit?: (paths: readonly Uint8Array[]) => Promise<unknown>;
  /** The index was just read from a tree: no file's stat is known. */
  readFromTree?: boolean;
  /** `refuseSpecialFiles` has just been run for this listing. */
  checked?: boolean;
  /**
   * The index is empty (no file yet) and this tree (a commit's) stands for it: it is listed with
   * the tree (`ls-files --with-tree`) instead of being read into the index first, which every
   * listed file is then added to. Read in only when a tracked file is too large to read.
   */
  overlay?: string;
}

/** What `stageWorkTree` left out: new files (large, or binary), and files above MAX_FILE_BYTES. */
interface Staged {
  left: string[];
  tooLarge: string[];
  /** Whether the index was written (false: no file changed, none is new). */
  staged: boolean;
}

/**
 * The lines a patch starts with when files above MAX_FILE_BYTES were left out of it, one per file
 * (before the first diff, where `git apply` and `patch` read no line); "" when none was.
 */
export function leftOutLines(tooLarge: readonly string[]): string {
  return tooLarge.map((name) =>
    `# Deft left ${JSON.stringify(name)} out of this patch: it is above ${
      MAX_FILE_BYTES / 1024 / 1024
    } MiB, so it was not read.\n`
  ).join("");
}

/** Whether `patch` changes anything: a diff beyond the lines saying what was left out of it. */
export function patchChanges(patch: string): boolean {
  return patch.split("\n").some((line) => line.trim() !== "" && !line.startsWith("# Deft left "));
}

/** Throws a PatchError naming each ignore or attributes file that is not a regular file. */
export async function refuseSpecialFiles(place: GitPlace, facts: RepoFacts): Promise<void> {
  const special = await place.specialFiles(facts.infoFiles);
  if (special.length === 0) return;
  throw new PatchError(
    `the patch cannot be computed in ${place.where}: ${special.join(", ")} ` +
      `${special.length === 1 ? "is not a regular file" : "are not regular files"} (a FIFO or ` +
      "device), and git would wait on it for ever. Remove it (or make it a plain file) and " +
      "compute the patch again.",
  );
}

export function joinNul(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length + 1;
  }
  return all;
}
