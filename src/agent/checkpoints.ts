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
  MAX_FILE_BYTES,
  recordCheckpointIn,
  type RepoFacts,
  restoreCheckpointIn,
  storeBytes,
  workspacePrefix,
} from "./patch.ts";
import type { GitPlace, GitSandbox } from "../policy/git.ts";
import type { Container } from "../container/container.ts";
import { resolve } from "node:path";
import {
  type CheckpointRecord,
  defaultTrajectoryPath,
  readTrajectory,
  type RewindRecord,
  stateDir,
  type Trajectory,
} from "../trajectory/recorder.ts";
import { conversationRanges } from "../trajectory/conversation.ts";

/** A store above this size takes no more checkpoints (the session says so). */
export const MAX_STORE_BYTES = 1024 * 1024 * 1024;

/** Where a session's checkpoints are kept on the host; throws for an id that is not a plain name. */
export function checkpointStoreDir(sessionId: string): string {
  if (!/^[\w.-]+$/.test(sessionId) || /^\.+$/.test(sessionId)) {
    throw new CheckpointError(
      `'${sessionId}' is not a session id (letters, digits, '_', '-', '.'): refused, so that no ` +
        "folder outside Deft's checkpoint store is touched. deft sessions lists the ids.",
    );
  }
  return `${checkpointsRoot()}/${sessionId}`;
}

function checkpointsRoot(): string {
  return `${stateDir()}/checkpoints`;
}

/** The file in a store that names the trajectory of its session (for the sweep). */
const OWNER_FILE = "session.json";

/**
 * Removes a session's host store; false when there was none. Refuses (CheckpointError) a store
 * or a checkpoints folder that is a symlink, not a folder, or not the user's own: nothing
 * outside the state dir is followed or removed.
 */
export async function removeCheckpointStore(sessionId: string): Promise<boolean> {
  const store = checkpointStoreDir(sessionId);
  for (const path of [checkpointsRoot(), store]) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
    const uid = Deno.uid();
    if (!info.isDirectory || info.isSymlink || (uid !== null && info.uid !== uid)) {
      throw new CheckpointError(
        `${path} is ${
          info.isSymlink ? "a symlink" : !info.isDirectory ? "not a folder" : "another user's"
        }, not a checkpoint store Deft made: left alone. Remove it yourself if it should go.`,
      );
    }
  }
  // Deno.remove does not follow links inside the folder: a planted link goes, not its target.
  await Deno.remove(store, { recursive: true });
  return true;
}

/** How the sweep of stores whose session is gone is bounded. */
export interface SweepLimits {
  /** Stores looked at (default 500). */
  look?: number;
  /** Stores removed (default 20). */
  remove?: number;
  /** A store younger than this many ms is never swept: its session may be starting (1 hour). */
  minAgeMs?: number;
}

/**
 * Removes host stores whose session no longer exists: the trajectory the store names (its
 * `session.json`, else the default trajectory path of its id) is gone. Bounded (`limits`), and
 * safe: links, foreign and unreadable entries and young stores are left alone. The ids removed.
 */
export async function sweepCheckpointStores(limits: SweepLimits = {}): Promise<string[]> {
  const { look = 500, remove = 20, minAgeMs = 60 * 60 * 1000 } = limits;
  const removed: string[] = [];
  const root = checkpointsRoot();
  const rootInfo = await Deno.lstat(root).catch(() => undefined);
  if (!rootInfo?.isDirectory) return removed;
  let looked = 0;
  for await (const entry of Deno.readDir(root)) {
    if (++looked > look || removed.length >= remove) break;
    if (!entry.isDirectory || entry.isSymlink) continue;
    try {
      const store = checkpointStoreDir(entry.name);
      const info = await Deno.lstat(store);
      const age = Date.now() - (info.mtime?.getTime() ?? Date.now());
      if (age < minAgeMs) continue;
      const owner = await ownerOf(store);
      // A store being made has no owner file for a moment; a session still starting has no
      // trajectory yet, but its process is alive: neither is taken, even by --prune.
      if (!owner && age < OWNERLESS_GRACE_MS) continue;
      if (owner?.pid !== undefined) {
        const alive = isAlive(owner.pid);
        // Deno answers for /proc only under --allow-all: an owner Deft cannot look at is taken
        // for alive while its store is young (a session starting now), and for gone after.
        if (alive === true || (alive === undefined && age < UNKNOWN_OWNER_GRACE_MS)) continue;
      }
      const trajectory = owner?.trajectory ?? defaultTrajectoryPath(entry.name);
      if (
        await Deno.lstat(trajectory).then(() => true, (e) => !(e instanceof Deno.errors.NotFound))
      ) {
        continue;
      }
      if (await removeCheckpointStore(entry.name)) removed.push(entry.name);
    } catch {
      // Not a store Deft made, or it went away meanwhile: left alone.
    }
  }
  return removed;
}

/** A store without an owner file younger than this is left by every sweep (it is being made). */
const OWNERLESS_GRACE_MS = 60 * 1000;

/**
 * What a store's owner file says: the trajectory path (undefined when it has none or a strange
 * one) and the pid of the Deft that made the store; undefined without a readable owner file.
 */
async function ownerOf(
  store: string,
): Promise<{ trajectory?: string; pid?: number; workspace?: string } | undefined> {
  const path = `${store}/${OWNER_FILE}`;
  const info = await Deno.lstat(path).catch(() => undefined);
  // Read only a small regular file: a FIFO or a link planted there is not opened.
  if (!info?.isFile || info.size > 64 * 1024) return undefined;
  try {
    const owner = JSON.parse(await Deno.readTextFile(path));
    const trajectory = owner?.trajectory;
    const pid = owner?.pid;
    const workspace = owner?.workspace;
    return {
      workspace: typeof workspace === "string" && workspace.startsWith("/") ? workspace : undefined,
      trajectory: typeof trajectory === "string" && trajectory.startsWith("/")
        ? trajectory
        : undefined,
      pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * Refuses (CheckpointError) to restore files from session `sessionId`'s host store into
 * `workspace` unless the store was made for that workspace: its owner file names it, or names a
 * trajectory recorded there. A trajectory is only a file (one can be made by hand, or copied from
 * another folder) and its session id may name any store: the store's own record decides. Writes
 * nothing.
 */
export async function checkStoreOwner(sessionId: string, workspace: string): Promise<void> {
  const store = checkpointStoreDir(sessionId);
  const owner = await ownerOf(store);
  let recordedIn = owner?.workspace;
  if (recordedIn === undefined && owner?.trajectory) {
    // A store made before its owner file named the workspace: its trajectory says where.
    const data = await readTrajectory(owner.trajectory).catch(() => undefined);
    if (typeof data?.working_dir === "string") recordedIn = data.working_dir;
  }
  if (recordedIn === workspace) return;
  throw new CheckpointError(
    recordedIn === undefined
      ? `the checkpoints of session ${sessionId} (${store}) do not say which workspace they ` +
        `were taken in, so their files are not restored into ${workspace}: nothing was ` +
        "changed. --conversation still cuts the conversation."
      : `the checkpoints of session ${sessionId} were taken in ${recordedIn}, not in this ` +
        `workspace (${workspace}): the trajectory names another workspace's session, so none of ` +
        "its files are restored here; nothing was changed. Rewind from that folder (-w), or " +
        "only --conversation.",
  );
}

/** Whether process `pid` exists (Linux's /proc; elsewhere unknown, taken as gone). */
/** A store whose owner Deft cannot look at is left by every sweep while younger than this. */
const UNKNOWN_OWNER_GRACE_MS = 60 * 60 * 1000;

/** Whether process `pid` runs: true, false, or undefined when Deft may not look (/proc). */
function isAlive(pid: number): boolean | undefined {
  if (pid === Deno.pid) return true;
  // Above the kernel's highest possible pid (2^22): no process.
  if (pid > 4_194_304) return false;
  try {
    Deno.lstatSync(`/proc/${pid}`);
    return true;
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? false : undefined;
  }
}

/** Where checkpoints are written: a git place and the store folder there. */
export interface CheckpointPlace {
  place: GitPlace;
  store: string;
  /** What git told of the repository at the last checkpoint here (spares a git process). */
  facts?: RepoFacts;
  /** The store was made with this place and holds no checkpoint yet. */
  fresh?: boolean;
}

/**
 * The host's checkpoint place for a session (the store made when missing, mode 0700).
 * `trajectory`: the session's trajectory file, written in a new store so that the sweep
 * (`sweepCheckpointStores`, run here for a new store) knows when the session is gone.
 */
export async function hostCheckpointPlace(
  workspace: string,
  sessionId: string,
  sandbox?: GitSandbox,
  trajectory?: string,
): Promise<CheckpointPlace> {
  const store = checkpointStoreDir(sessionId);
  const isNew = !await Deno.lstat(store).then(() => true, () => false);
  await Deno.mkdir(`${store}/objects`, { recursive: true, mode: 0o700 });
  if (isNew && trajectory) {
    await Deno.writeTextFile(
      `${store}/${OWNER_FILE}`,
      JSON.stringify({ trajectory: resolve(trajectory), pid: Deno.pid, workspace }) + "\n",
      { createNew: true, mode: 0o600 },
    ).catch(() => {});
    await sweepCheckpointStores().catch(() => []);
  }
  const place = await checkpointHostPlace(workspace, store, sandbox);
  return { place: await exactBytes(place, store, isNew), store, fresh: isNew };
}

/** A container's checkpoint place: a store inside it, kept for as long as the container. */
export async function containerCheckpointPlace(container: Container): Promise<CheckpointPlace> {
  const place = (await import("../container/patch.ts")).containerPlace(container);
  const store = await place.scratch("baseline");
  return { place: await exactBytes(place, store, true), store, fresh: true };
}

/** Attributes that turn off every conversion between the files and a checkpoint's bytes. */
const NO_CONVERSION = "* -text -eol -crlf -ident -filter -working-tree-encoding\n";

/**
 * `place` with the repository's attributes out of the way: a `.gitattributes` saying
 * `text eol=lf`, `ident` or a `working-tree-encoding` would otherwise change what a checkpoint
 * holds and what a rewind writes. Git 2.39 has no `--attr-source`, but
 * `$GIT_COMMON_DIR/info/attributes` outranks every in-tree file: each git call on the store's
 * index runs with a common dir of the store's own (`<store>/attrs`, made here through git, so it
 * works inside a container too) whose `info/attributes` unsets them all and whose `info/exclude`
 * is a link to the repository's (ignored files stay ignored). Calls that name `HEAD` read the
 * repository's refs as before (they write no file). Throws CheckpointError when the override is
 * not in force after it was written.
 */
async function exactBytes(place: GitPlace, store: string, fresh = false): Promise<GitPlace> {
  const common = `${store}/attrs`;
  const inForce = async () => {
    const r = await place.git(
      ["check-attr", "text", "ident", "working-tree-encoding", "--", "deft-probe"],
      { GIT_COMMON_DIR: common },
    );
    return r.ok && r.out.split("\n").filter((l) => l.endsWith(": unset")).length === 3;
  };
  if (fresh || !await inForce()) {
    const last = await writeCommonDir(place, store, common);
    if (!last.ok || !await inForce()) {
      throw new CheckpointError(
        `could not keep checkpoints byte-exact in ${place.where} (${
          last.err.trim() || "the attributes override is not in force"
        }): none are taken, so that no rewind writes converted line endings.`,
      );
    }
  }
  const own = (args: readonly string[], env?: Record<string, string>) =>
    env?.GIT_INDEX_FILE !== undefined && !args.includes("HEAD");
  return {
    ...place,
    git: (args, env, stdin) =>
      place.git(args, own(args, env) ? { ...env, GIT_COMMON_DIR: common } : env, stdin),
  };
}

/** Makes `common` (see exactBytes) with git alone; the last git step's result. */
async function writeCommonDir(place: GitPlace, store: string, common: string) {
  const found = await place.git(
    ["rev-parse", "--show-object-format", "--path-format=absolute", "--git-path", "info/exclude"],
  );
  if (!found.ok) return found;
  const [format, exclude] = found.out.split("\n");
  // GIT_DIR names the folder to make, one of Deft's: the workspace's config is not read.
  const made = await place.git(
    ["init", "-q", "--bare", "--template=", `--object-format=${format}`],
    { GIT_DIR: common },
  );
  if (!made.ok) return made;
  // Not bare: it stands in for the repository's common dir while git works on the files.
  const config = await place.git(["config", "core.bare", "false"], { GIT_DIR: common });
  if (!config.ok) return config;
  const env = {
    GIT_DIR: common,
    GIT_WORK_TREE: common,
    GIT_INDEX_FILE: `${common}/write.index`,
    GIT_OBJECT_DIRECTORY: `${store}/objects`,
  };
  const blob = (text: string) =>
    place.git(["hash-object", "-w", "--stdin"], env, new TextEncoder().encode(text));
  const attributes = await blob(NO_CONVERSION);
  const link = await blob(exclude);
  if (!attributes.ok) return attributes;
  if (!link.ok) return link;
  const listed = await place.git(
    ["update-index", "--add", "--index-info"],
    env,
    new TextEncoder().encode(
      `100644 ${attributes.out.trim()}\tinfo/attributes\n` +
        `120000 ${link.out.trim()}\tinfo/exclude\n`,
    ),
  );
  if (!listed.ok) return listed;
  // The user's own attributes file could convert this one too.
  return await place.git(
    ["-c", "core.attributesFile=/dev/null", "checkout-index", "-f", "-a"],
    env,
  );
}

/**
 * The checkpoint place of a session recorded in `container`, for rewinding it there: the store
 * its checkpoints name (inside the container, made by `containerCheckpointPlace`). Throws
 * CheckpointError when the records name none, or a path that is not such a store.
 */
export async function recordedContainerPlace(
  container: Container,
  data: Trajectory,
): Promise<CheckpointPlace> {
  const store = data.checkpoints?.at(-1)?.store ?? "";
  if (!/^\/tmp\/deft\/baseline\.[A-Za-z0-9]+$/.test(store)) {
    throw new CheckpointError(
      `the session's checkpoints name no store Deft makes in a container ('${store}'): ` +
        "its files cannot be rewound; rewind only the conversation.",
    );
  }
  const place = (await import("../container/patch.ts")).containerPlace(container);
  const there = await place.git(["-c", "core.bare=false", "rev-parse", "--git-dir"], {
    GIT_DIR: `${store}/attrs`,
  });
  if (!there.ok) {
    throw new CheckpointError(
      `the checkpoint store ${store} is not in ${place.where} (${there.err.trim()}): it was ` +
        "removed with the session's container, or this is another one. Rewind only the " +
        "conversation, or attach to the container the session ran in (--docker-container-id).",
    );
  }
  return { place: await exactBytes(place, store), store };
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
  // The store's size is counted while the work tree is listed; nothing is written before.
  const gate = storeBytes(at.place, at.store).then((bytes) => {
    if (bytes <= MAX_STORE_BYTES) return;
    throw new CheckpointError(
      `the checkpoint store ${at.store} holds ${Math.round(bytes / 1024 / 1024)} MiB, past its ` +
        `bound of ${MAX_STORE_BYTES / 1024 / 1024} MiB: no more checkpoints this session. ` +
        "Start a new session, or set `checkpoints: false` in the config for this workspace.",
    );
  });
  // Handled now (it may fail before anything awaits it); whoever awaits it still gets the error.
  gate.catch(() => {});
  const previous = data.checkpoints?.at(-1);
  // The store's index lists the checkpoint before when that one was taken in this store.
  const kept = previous !== undefined && previous.store === at.store;
  const recorded = await recordCheckpointIn(at.place, at.store, {
    kept,
    empty: at.fresh,
    facts: at.facts,
    gate,
    since: kept ? previous.tree : undefined,
  });
  const { tree, leftOut, repoObjects, facts } = recorded;
  at.facts = facts;
  at.fresh = false;
  const changed = recorded.changed ??
    (previous ? await changedBetween(at.place, at.store, previous.tree, tree, repoObjects) : []);
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
): Promise<RewindDone> {
  const target = checkpointOfTurn(data, options.turn);
  let before: CheckpointRecord | undefined;
  let leftAlone: string[] = [];
  if (options.files) {
    if (!at) throw new CheckpointError("the checkpoint store cannot be reached from here");
    const latest = data.checkpoints!.at(-1)!;
    const { tree } = await recordCheckpointIn(at.place, at.store, {
      kept: latest.store === at.store,
      facts: at.facts,
    });
    const outside = await changedBetween(at.place, at.store, lastLeft(data), tree);
    if (outside.length > 0 && !options.force) throw new ChangedOutsideError(outside, options.turn);
    before = await takeCheckpoint(at, data, {
      turn: latest.turn,
      kind: "rewind",
      label: `before the rewind to turn ${options.turn}`,
    });
    // What either state does not hold stays as it is (a new large file, one too large to read).
    leftAlone = [...new Set([...before.left_out ?? [], ...target.left_out ?? []])];
    await refuseOutside(at, before.tree, target.tree);
    await restoreCheckpointIn(at.place, at.store, before.tree, target.tree, leftAlone);
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
