/**
 * Checkpoints: the workspace's state at a session's start and after each turn — every file git
 * does not ignore, whoever changed it (the editor, the JSON editor, the shell) — as a git tree in
 * the session's own object store, and the conversation then; and going back to one (`rewind`).
 * Each is named by one number, its `id` (0 for the session's start, then one more each), which no
 * rewind reuses: `deft rewind --to N` and `/rewind N` name it.
 *
 * The store is a folder of Deft's state dir beside the trajectories
 * (`<state>/checkpoints/<session id>/`, ./checkpoint_store.ts: `objects/` and an `index` kept
 * between checkpoints, so a checkpoint reads only the files that changed); inside a container, a
 * folder inside it, gone with the container (./checkpoint_place.ts). It is bounded
 * (MAX_STORE_BYTES: past it no more checkpoints are taken, and the session says so) and removed
 * with `removeCheckpointStore`. In a repository, the repository's own objects are read as an
 * alternate and never written; its index, refs, config and hooks are never touched. A folder in no
 * repository gets a store of its own that needs none. Every git runs hardened (policy/git.ts), in
 * the sandbox when there is one.
 *
 * What a checkpoint does not hold is said: ignored files, build droppings, and new files the
 * patch leaves out (large ones, binary ones above a small size) are listed in its record
 * (`left_out`) and left alone by a rewind.
 */
import { MAX_FILE_BYTES } from "./patch.ts";
import {
  changedBetween,
  recordCheckpointIn,
  restoreCheckpointIn,
  workspacePrefix,
} from "./checkpoint_tree.ts";
import {
  type CheckpointRecord,
  type RewindRecord,
  type Trajectory,
} from "../trajectory/recorder.ts";
import { conversationRanges } from "../trajectory/conversation.ts";
import { CheckpointError, MAX_STORE_BYTES, storeBytes } from "./checkpoint_store.ts";
import type { CheckpointPlace } from "./checkpoint_place.ts";

export {
  CheckpointError,
  checkpointStoreDir,
  checkStoreOwner,
  MAX_STORE_BYTES,
  removeCheckpointStore,
  sweepCheckpointStores,
  type SweepLimits,
} from "./checkpoint_store.ts";
export { type EarlyCheckpoints, startCheckpointsEarly } from "./checkpoint_early.ts";
export {
  type CheckpointPlace,
  containerCheckpointPlace,
  hostCheckpointPlace,
  MAX_STANDALONE_FILES,
  recordedContainerPlace,
} from "./checkpoint_place.ts";

/**
 * Takes a checkpoint of the workspace and appends its record to `data.checkpoints`; returns it.
 * Throws CheckpointError when the store is past its bound, and git's errors as they are.
 */
export async function takeCheckpoint(
  at: CheckpointPlace,
  data: Trajectory,
  what: { turn: number; kind: CheckpointRecord["kind"]; label: string },
): Promise<CheckpointRecord> {
  const started = performance.now();
  // The store's size is counted while the work tree is listed — unless this process knows it is
  // within its bound (a fresh store holds nothing; a counted one grew by at most what was read
  // into it since); nothing is written before.
  const known = at.fresh ? 0 : at.bytes;
  const counted = known !== undefined && known <= MAX_STORE_BYTES
    ? Promise.resolve(known)
    : storeBytes(at.place, at.store).then((bytes) => {
      if (bytes <= MAX_STORE_BYTES) return bytes;
      throw new CheckpointError(
        `the checkpoint store ${at.store} holds ${Math.round(bytes / 1024 / 1024)} MiB, past ` +
          `its bound of ${MAX_STORE_BYTES / 1024 / 1024} MiB: no more checkpoints this ` +
          "session. Start a new session, or set `checkpoints: false` in the config for this " +
          "workspace.",
      );
    });
  const gate = Promise.all([counted, at.ready]);
  // Handled now (it may fail before anything awaits it); whoever awaits it still gets the error.
  gate.catch(() => {});
  const fresh = at.fresh;
  let admitted: readonly Uint8Array[] = [];
  const admit = async (paths: readonly Uint8Array[]) => {
    admitted = paths;
    await at.admit?.(paths);
  };
  const previous = data.checkpoints?.at(-1);
  // The store's index lists the checkpoint before when that one was taken in this store.
  const kept = previous !== undefined && previous.store === at.store;
  // The index as this process last wrote it (no rewind, no other process since).
  const stamp = at.indexStamp?.();
  const indexTree = kept && stamp !== undefined && at.written?.stamp === stamp
    ? at.written.tree
    : undefined;
  at.written = undefined;
  const recorded = await recordCheckpointIn(at.place, at.store, {
    kept,
    empty: at.fresh,
    facts: at.facts,
    gate,
    since: kept ? previous.tree : undefined,
    admit,
    indexTree,
  });
  const { tree, leftOut, repoObjects, facts } = recorded;
  const now = at.indexStamp?.();
  if (now !== undefined) at.written = { tree, stamp: now };
  // A session's first checkpoint reads every file: it is counted at the next one instead.
  const grown = fresh ? undefined : at.measure?.(admitted);
  const base = await counted.catch(() => undefined);
  at.bytes = grown === undefined || base === undefined ? undefined : base + grown;
  at.facts = facts;
  at.fresh = false;
  const changed = recorded.changed ??
    (previous ? await changedBetween(at.place, at.store, previous.tree, tree, repoObjects) : []);
  const record: CheckpointRecord = {
    // One more than the last, never reused (a session recorded before this numbering began at 1).
    id: previous ? previous.id + 1 : 0,
    turn: what.turn,
    kind: what.kind,
    label: oneLine(what.label),
    time: new Date().toISOString(),
    tree,
    conversation: conversationRanges(data),
    interactions: data.llm_interactions.length,
    files_changed: changed.length,
    ...(leftOut.length > 0 && { left_out: leftOut }),
    store: at.store,
    ms: Math.round(performance.now() - started),
  };
  (data.checkpoints ??= []).push(record);
  return record;
}

/** The number of turns the trajectory's checkpoints cover (the next turn is one more). */
export function lastTurn(data: Trajectory): number {
  return data.checkpoints?.reduce((n, c) => Math.max(n, c.turn), 0) ?? 0;
}

/** The checkpoint `--to N` and `/rewind N` name: the one whose id is `n`. */
export function checkpointNamed(data: Trajectory, n: number): CheckpointRecord {
  const found = data.checkpoints?.find((c) => c.id === n);
  if (found) return found;
  const ids = data.checkpoints?.map((c) => c.id) ?? [];
  throw new CheckpointError(
    `no checkpoint ${n} in this session` +
      (ids.length > 0
        ? ` (there are ${numberRanges(ids)}; deft checkpoints lists them).`
        : ": it took none."),
  );
}

/** `[0, 1, 2, 5]` as "0-2, 5". */
function numberRanges(ids: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    parts.push(j > i ? `${ids[i]}-${ids[j]}` : String(ids[i]));
    i = j;
  }
  return parts.join(", ");
}

/** What a rewind is to restore. */
export interface RewindOptions {
  /** The checkpoint to go back to (its id). */
  to: number;
  files: boolean;
  conversation: boolean;
  /** Overwrite files changed outside Deft since the latest checkpoint. */
  force?: boolean;
}

/** A rewind refused: the files changed since the latest checkpoint, which it would overwrite. */
export class ChangedOutsideError extends CheckpointError {
  constructor(readonly files: string[], to: number) {
    super(
      `${files.length === 1 ? "this file was" : "these files were"} changed since the last ` +
        `checkpoint, outside Deft: ${files.join(", ")}. Going back to checkpoint ${to} would ` +
        "overwrite them; save what you want of them, then rewind with --force.",
    );
    this.name = "ChangedOutsideError";
  }
}

/**
 * Goes back to checkpoint `options.to`: first the state now is a checkpoint (kind
 * `rewind`: going back to it undoes the rewind); files changed since the latest checkpoint stop
 * the rewind (ChangedOutsideError) unless `force`; then the files come back (`files`) and the
 * conversation is cut there (`conversation`, a record in `data.rewinds`).
 */
export async function rewind(
  at: CheckpointPlace | undefined,
  data: Trajectory,
  options: RewindOptions,
): Promise<RewindDone> {
  const target = checkpointNamed(data, options.to);
  let before: CheckpointRecord | undefined;
  let leftAlone: string[] = [];
  if (options.files) {
    if (!at) throw new CheckpointError("the checkpoint store cannot be reached from here");
    const latest = data.checkpoints!.at(-1)!;
    // What this and the restore write is not measured: the store is counted again next time.
    at.bytes = undefined;
    const { tree } = await recordCheckpointIn(at.place, at.store, {
      kept: latest.store === at.store,
      facts: at.facts,
      gate: at.ready,
      admit: at.admit,
    });
    const outside = await changedBetween(at.place, at.store, lastLeft(data), tree);
    if (outside.length > 0 && !options.force) throw new ChangedOutsideError(outside, target.id);
    before = await takeCheckpoint(at, data, {
      turn: latest.turn,
      kind: "rewind",
      label: `before the rewind to checkpoint ${target.id}`,
    });
    // What either state does not hold stays as it is (a new large file, one too large to read).
    leftAlone = [...new Set([...before.left_out ?? [], ...target.left_out ?? []])];
    await refuseOutside(at, before.tree, target.tree);
    await restoreCheckpointIn(at.place, at.store, before.tree, target.tree, leftAlone);
    at.bytes = undefined;
    at.written = undefined;
  }
  const record: RewindRecord = {
    time: new Date().toISOString(),
    to_checkpoint: target.id,
    to_turn: target.turn,
    files: options.files,
    conversation: options.conversation,
    ...(before && { before_checkpoint: before.id }),
    at_interactions: data.llm_interactions.length,
    ranges: options.conversation ? target.conversation : conversationRanges(data),
  };
  (data.rewinds ??= []).push(record);
  return { target, before, record, leftAlone };
}

/** What a rewind did: the checkpoint gone back to, the one of the state before, and its record. */
export interface RewindDone {
  target: CheckpointRecord;
  before?: CheckpointRecord;
  record: RewindRecord;
  /**
   * Files (from the workspace) the rewind left as they are, since a checkpoint does not hold
   * them: large or binary new files, and files above MAX_FILE_BYTES (patch.ts).
   */
  leftAlone: string[];
}

/** The line a rewind adds when it left files as they were (`RewindDone.leftAlone`); "" if none. */
export function leftAloneText(leftAlone: readonly string[]): string {
  if (leftAlone.length === 0) return "";
  const shown = leftAlone.slice(0, 5).map((name) => JSON.stringify(name)).join(", ");
  return `not restored, left as ${leftAlone.length === 1 ? "it is" : "they are"} (no ` +
    `checkpoint holds ${leftAlone.length === 1 ? "it" : "them"}: above ${
      MAX_FILE_BYTES / 1024 / 1024
    } MiB, or a large or binary new file): ${shown}${leftAlone.length > 5 ? ", …" : ""}`;
}

/**
 * Refuses (CheckpointError) a rewind that would write a file outside the workspace: every path
 * that differs between the two trees must be inside it (a checkpoint's tree holds paths from the
 * repository's top, and a workspace may be one of its folders). Checked before any file is
 * written.
 */
async function refuseOutside(at: CheckpointPlace, from: string, to: string): Promise<void> {
  const prefix = await workspacePrefix(at.place);
  const changed = await changedBetween(at.place, at.store, from, to);
  const outside = changed.filter((path) => !path.startsWith(prefix));
  if (outside.length === 0) return;
  throw new CheckpointError(
    `the checkpoint would write ${outside.length} file(s) outside this workspace (` +
      `${outside.slice(0, 5).map((p) => JSON.stringify(p)).join(", ")}` +
      `${outside.length > 5 ? ", …" : ""}): it is not this workspace's. Nothing was restored.`,
  );
}

/**
 * The tree Deft last left the workspace as: the latest checkpoint's, or when a rewind of the files
 * came after it, the tree that rewind restored.
 */
function lastLeft(data: Trajectory): string {
  const latest = data.checkpoints!.at(-1)!;
  const rewound = data.rewinds?.findLast((r) => r.files);
  if (rewound?.before_checkpoint !== latest.id) return latest.tree;
  return data.checkpoints!.find((c) => c.id === rewound.to_checkpoint)?.tree ?? latest.tree;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
