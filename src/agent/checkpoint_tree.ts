/**
 * A checkpoint's tree (src/agent/checkpoints.ts) written into a lasting store, and the way back:
 * the work tree read into the store's own index, which is kept between checkpoints so only the
 * files that changed are read again (`recordCheckpointIn`); the files that differ between two
 * checkpoints (`changedBetween`); and a restore (`restoreCheckpointIn`), git's two-tree
 * read-tree, byte for byte and links as links. Every filter of the patch applies (./patch.ts:
 * droppings, large and binary new files, files above MAX_FILE_BYTES never read).
 */
import {
  type GitLimits,
  type GitPlace,
  type GitSandbox,
  privateStoreEnv,
  splitNul,
} from "../policy/git.ts";
import { hostPlace } from "./host_place.ts";
import {
  joinNul,
  must,
  PatchError,
  readHead,
  refuseSpecialFiles,
  type RepoFacts,
  repositoryFacts,
  stageWorkTree,
} from "./patch.ts";

const decoder = new TextDecoder();

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
  /**
   * Files it does not hold, from the workspace: those above MAX_FILE_BYTES (tracked ones keep
   * what the checkpoint before held), and new files the patch leaves out (large, or binary above
   * a small size).
   */
  leftOut: string[];
  /** The repository's object store, absolute (for `changedBetween`). */
  repoObjects: string;
  /** What `git rev-parse` told of the repository (pass it to the next checkpoint in the store). */
  facts: RepoFacts;
  /** With `since`: the files (from the repository's top) that differ from that tree. */
  changed?: string[];
}

/** What the caller of `recordCheckpointIn` knows, to spare git processes. */
export interface CheckpointOptions {
  /** The store's index lists a checkpoint taken in it (else an empty one is filled from HEAD). */
  kept?: boolean;
  /** The store is new: its index is filled from HEAD without looking. */
  empty?: boolean;
  /**
   * The repository's facts from a checkpoint before in this store: its common dir links the
   * `info/exclude` found then, which is what git reads, and alternates are looked up again.
   */
  facts?: RepoFacts;
  /** Awaited before anything is written into the store (the bound on its size). */
  gate?: Promise<unknown>;
  /** A tree in the store to list the changed files against (`CheckpointTree.changed`). */
  since?: string;
  /**
   * The tree the store's index is known to hold (written from it, and the index file untouched
   * since): when no file changed and none is new, it is the checkpoint's, with no git to ask.
   */
  indexTree?: string;
  /**
   * Awaited, after `gate`, with the names (bytes, from the workspace) about to be read into the
   * store, before any is: it may refuse them by throwing (the store's bound).
   */
  admit?: (paths: readonly Uint8Array[]) => Promise<unknown>;
}

/**
 * Writes the work tree's state (as `recordBaseline` does) as a tree into `store`, a lasting folder
 * with `objects/` whose `index` is kept between checkpoints, so only changed files are read again.
 * `kept`: the caller knows the store's index lists a checkpoint taken in it (else a new store's
 * empty index is first filled from HEAD).
 */
export async function recordCheckpointIn(
  place: GitPlace,
  store: string,
  { kept = false, empty = false, facts: known, gate, since, admit, indexTree }: CheckpointOptions =
    {},
): Promise<CheckpointTree> {
  const facts = known ?? await repositoryFacts(place);
  if (!facts) {
    throw new PatchError(`git rev-parse failed: ${place.where} is not in a git work tree`);
  }
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [facts.objects]);
  const exact: GitPlace = { ...place, git: (a, e, i) => place.git([...EXACT_FILES, ...a], e, i) };
  // A new store's index starts from HEAD; a kept one already lists the last checkpoint.
  let readFromTree = false;
  let checked = false;
  let overlay: string | undefined;
  if (!kept) {
    if (empty) {
      // A new store has no index file, an empty one; HEAD's tree (read by its id: the store's
      // common dir has no refs) stands for it in the listing, and every file listed is added
      // (as `git add -A` into a new index). Nothing is listed before the walk for FIFOs among
      // the ignore and attributes lists is done; `gate` (the store's attributes checked) is
      // awaited before anything is written, and runs beside the listing meanwhile (a session's
      // store has two sandboxed gits started early, ./checkpoint_early.ts).
      await refuseSpecialFiles(place, facts);
      overlay = facts.head;
      readFromTree = checked = true;
    } else {
      await gate;
      const listed = await must(
        exact.git(["ls-files", "-z", "--cached", "--", ":(top)"], env),
        "ls-files",
      );
      if (!listed.bytes.length) readFromTree = (await readHead(exact, env), true);
    }
  }
  const { left, tooLarge, staged } = await stageWorkTree(exact, env, facts, {
    gate,
    admit,
    readFromTree,
    checked,
    overlay,
  });
  if (!staged && indexTree !== undefined && (since === undefined || since === indexTree)) {
    // Nothing changed since the index was written as this tree: it is this checkpoint's.
    return {
      tree: indexTree,
      leftOut: [...tooLarge, ...left],
      repoObjects: facts.objects,
      facts,
      ...(since !== undefined && { changed: [] }),
    };
  }
  // The index is the new tree: what changed since `since` is read from it while it is written.
  const [written, changed] = await Promise.all([
    must(exact.git(["write-tree"], env), "write-tree"),
    since === undefined ? undefined : must(
      place.git(["diff-index", "--cached", "-z", "--name-only", "--no-renames", since], env),
      "diff-index",
    ),
  ]);
  return {
    tree: written.out.trim(),
    leftOut: [...tooLarge, ...left],
    repoObjects: facts.objects,
    facts,
    ...(changed && { changed: splitNul(changed.bytes).map((name) => decoder.decode(name)) }),
  };
}

/**
 * The files (paths from the repository's top) that differ between two trees in `store`.
 */
export async function changedBetween(
  place: GitPlace,
  store: string,
  from: string,
  to: string,
  repoObjects?: string,
): Promise<string[]> {
  if (from === to) return [];
  repoObjects ??= await objectsOf(place);
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
 * git never writes through a symlinked folder. Files neither tree holds are left alone, and so
 * are `leaveAlone`'s (from the workspace: files a checkpoint did not hold); git stops (and nothing
 * is overwritten) when one stands where `target` has a file.
 */
export async function restoreCheckpointIn(
  place: GitPlace,
  store: string,
  current: string,
  target: string,
  leaveAlone: readonly string[] = [],
): Promise<void> {
  const repoObjects = await objectsOf(place);
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [repoObjects]);
  // A file a checkpoint could not hold (too large to read) is taken out of both trees: git then
  // neither writes it nor looks at it, and keeps its index entry.
  const without = async (tree: string) => {
    if (leaveAlone.length === 0) return tree;
    const other = privateStoreEnv(`${store}/rewind.index`, `${store}/objects`, [repoObjects]);
    await must(place.git(["read-tree", tree], other), "read-tree");
    await must(
      place.git(
        ["update-index", "--force-remove", "-z", "--stdin"],
        other,
        joinNul(leaveAlone.map((name) => new TextEncoder().encode(name))),
      ),
      "update-index",
    );
    return (await must(place.git(["write-tree"], other), "write-tree")).out.trim();
  };
  const from = await without(current);
  const to = await without(target);
  await must(
    place.git([...EXACT_FILES, "read-tree", "-m", "-u", from, to], env),
    "read-tree",
  );
}

/**
 * The host as a place for a lasting checkpoint store (`store` writable to git in the sandbox).
 * `gitDir`: the workspace is in no repository, and this folder of the store stands in for one
 * (see `hostPlace`).
 */
export function checkpointHostPlace(
  dir: string,
  store: string,
  sandbox?: GitSandbox,
  limits?: GitLimits,
  gitDir?: string,
): Promise<GitPlace> {
  return hostPlace(dir, sandbox, limits, store, gitDir);
}

/** The place's workspace as a path from its repository's top ("" at the top, else `dir/`). */
export async function workspacePrefix(place: GitPlace): Promise<string> {
  const r = await must(place.git(["rev-parse", "--show-prefix"]), "rev-parse");
  return r.out.replace(/\n$/, "");
}

/** The repository's object store, absolute. */
async function objectsOf(place: GitPlace): Promise<string> {
  const objects = await must(
    place.git(["rev-parse", "--path-format=absolute", "--git-path", "objects"]),
    "rev-parse",
  );
  return objects.out.trim();
}
