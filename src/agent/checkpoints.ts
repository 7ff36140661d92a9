/**
 * Checkpoints: the workspace's state at a session's start and after each turn — every file git
 * does not ignore, whoever changed it (the editor, the JSON editor, the shell) — as a git tree in
 * the session's own object store, and the conversation then; and going back to one (`rewind`).
 *
 * The store is a folder of Deft's state dir beside the trajectories
 * (`<state>/checkpoints/<session id>/`: `objects/` and an `index` kept between checkpoints, so a
 * checkpoint reads only the files that changed); inside a container, a folder inside it, gone
 * with the container. It is bounded (MAX_STORE_BYTES: past it no more checkpoints are taken, and
 * the session says so) and removed with `removeCheckpointStore`. The repository's own objects are
 * read as an alternate and never written; its index, refs, config and hooks are never touched,
 * and every git runs hardened (policy/git.ts), in the sandbox when there is one.
 *
 * What a checkpoint does not hold is said: ignored files, build droppings, and new files the
 * patch leaves out (large ones, binary ones above a small size) are listed in its record
 * (`left_out`) and left alone by a rewind.
 */
import {
  changedBetween,
  checkpointHostPlace,
  recordCheckpointIn,
  restoreCheckpointIn,
  storeBytes,
} from "./patch.ts";
import type { GitPlace, GitSandbox } from "../policy/git.ts";
import type { Container } from "../container/container.ts";
import {
  type CheckpointRecord,
  type RewindRecord,
  stateDir,
  type Trajectory,
} from "../trajectory/recorder.ts";
import { conversationRanges } from "../trajectory/conversation.ts";

/** A store above this size takes no more checkpoints (the session says so). */
export const MAX_STORE_BYTES = 1024 * 1024 * 1024;

/** Where a session's checkpoints are kept on the host. */
export function checkpointStoreDir(sessionId: string): string {
  return `${stateDir()}/checkpoints/${sessionId}`;
}

/** Removes a session's host store (quietly, when there is none). */
export async function removeCheckpointStore(sessionId: string): Promise<void> {
  await Deno.remove(checkpointStoreDir(sessionId), { recursive: true }).catch(() => {});
}

/** Where checkpoints are written: a git place and the store folder there. */
export interface CheckpointPlace {
  place: GitPlace;
  store: string;
}

/** The host's checkpoint place for a session (the store made when missing, mode 0700). */
export async function hostCheckpointPlace(
  workspace: string,
  sessionId: string,
  sandbox?: GitSandbox,
): Promise<CheckpointPlace> {
  const store = checkpointStoreDir(sessionId);
  await Deno.mkdir(`${store}/objects`, { recursive: true, mode: 0o700 });
  return { place: await checkpointHostPlace(workspace, store, sandbox), store };
}

/** A container's checkpoint place: a store inside it, kept for as long as the container. */
export async function containerCheckpointPlace(container: Container): Promise<CheckpointPlace> {
  const place = (await import("../container/patch.ts")).containerPlace(container);
  return { place, store: await place.scratch("baseline") };
}

/** Checkpoints cannot be taken or restored: what failed and what to do. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckpointError";
  }
}

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
  const bytes = await storeBytes(at.place, at.store);
  if (bytes > MAX_STORE_BYTES) {
    throw new CheckpointError(
      `the checkpoint store ${at.store} holds ${Math.round(bytes / 1024 / 1024)} MiB, past its ` +
        `bound of ${MAX_STORE_BYTES / 1024 / 1024} MiB: no more checkpoints this session. ` +
        "Start a new session, or set `checkpoints: false` in the config for this workspace.",
    );
  }
  const { tree, leftOut } = await recordCheckpointIn(at.place, at.store);
  const previous = data.checkpoints?.at(-1);
  const changed = previous ? await changedBetween(at.place, at.store, previous.tree, tree) : [];
  const record: CheckpointRecord = {
    id: (previous?.id ?? 0) + 1,
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

/** The checkpoint `--to TURN` names: the latest one taken after that turn. */
export function checkpointOfTurn(data: Trajectory, turn: number): CheckpointRecord {
  const found = data.checkpoints?.findLast((c) => c.turn === turn);
  if (found) return found;
  const turns = [...new Set(data.checkpoints?.map((c) => c.turn) ?? [])].join(", ");
  throw new CheckpointError(
    `no checkpoint of turn ${turn} in this session` +
      (turns ? ` (there are turns ${turns}; deft checkpoints lists them).` : ": it took none."),
  );
}

/** What a rewind is to restore. */
export interface RewindOptions {
  turn: number;
  files: boolean;
  conversation: boolean;
  /** Overwrite files changed outside Deft since the latest checkpoint. */
  force?: boolean;
}

/** A rewind refused: the files changed since the latest checkpoint, which it would overwrite. */
export class ChangedOutsideError extends CheckpointError {
  constructor(readonly files: string[], turn: number) {
    super(
      `${files.length === 1 ? "this file was" : "these files were"} changed since the last ` +
        `checkpoint, outside Deft: ${files.join(", ")}. Going back to turn ${turn} would ` +
        "overwrite them; save what you want of them, then rewind with --force.",
    );
    this.name = "ChangedOutsideError";
  }
}

/**
 * Goes back to the checkpoint of `options.turn`: first the state now is a checkpoint (kind
 * `rewind`: going back to it undoes the rewind); files changed since the latest checkpoint stop
 * the rewind (ChangedOutsideError) unless `force`; then the files come back (`files`) and the
 * conversation is cut there (`conversation`, a record in `data.rewinds`).
 */
export async function rewind(
  at: CheckpointPlace | undefined,
  data: Trajectory,
  options: RewindOptions,
): Promise<{ target: CheckpointRecord; before?: CheckpointRecord; record: RewindRecord }> {
  const target = checkpointOfTurn(data, options.turn);
  let before: CheckpointRecord | undefined;
  if (options.files) {
    if (!at) throw new CheckpointError("the checkpoint store cannot be reached from here");
    const latest = data.checkpoints!.at(-1)!;
    const { tree } = await recordCheckpointIn(at.place, at.store);
    const outside = await changedBetween(at.place, at.store, lastLeft(data), tree);
    if (outside.length > 0 && !options.force) throw new ChangedOutsideError(outside, options.turn);
    before = await takeCheckpoint(at, data, {
      turn: latest.turn,
      kind: "rewind",
      label: `before the rewind to turn ${options.turn}`,
    });
    await restoreCheckpointIn(at.place, at.store, before.tree, target.tree);
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
  return { target, before, record };
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
