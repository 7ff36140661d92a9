/**
 * Where a session's checkpoints are kept on the host (`<state>/checkpoints/<session id>/`), who
 * made each store (its owner file), and their end: removed with `removeCheckpointStore`, or swept
 * when their session is gone (`sweepCheckpointStores`). What goes into a store is
 * ./checkpoints.ts's; how git reaches it, ./checkpoint_place.ts's.
 */
import { resolve } from "node:path";
import { type GitPlace, privateStoreEnv } from "../policy/git.ts";
import { defaultTrajectoryPath, readTrajectory, stateDir } from "../trajectory/recorder.ts";

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
 * Writes a new store's owner file (the session's trajectory, this process, the workspace), which
 * the sweep and `checkStoreOwner` read; quietly nothing when it is there already, unless
 * `replace` (the one a store made early wrote, which names no trajectory yet).
 */
export async function writeStoreOwner(
  store: string,
  trajectory: string,
  workspace: string,
  replace = false,
): Promise<void> {
  if (replace) await Deno.remove(`${store}/${OWNER_FILE}`).catch(() => {});
  await Deno.writeTextFile(
    `${store}/${OWNER_FILE}`,
    JSON.stringify({ trajectory: resolve(trajectory), pid: Deno.pid, workspace }) + "\n",
    { createNew: true, mode: 0o600 },
  ).catch(() => {});
}

/**
 * The owner file of a store made before its session has a trajectory (./checkpoint_early.ts):
 * this process and the workspace, so that no sweep takes the store while Deft runs.
 */
export function writeEarlyOwner(store: string, workspace: string): void {
  Deno.writeTextFileSync(
    `${store}/${OWNER_FILE}`,
    JSON.stringify({ pid: Deno.pid, workspace }) + "\n",
    { createNew: true, mode: 0o600 },
  );
}

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
        // A store made early (its owner names no trajectory yet) may wait long for its session's
        // first turn: its git already writes into it, so it is kept for longer.
        const grace = owner.early ? EARLY_OWNER_GRACE_MS : UNKNOWN_OWNER_GRACE_MS;
        if (alive === true || (alive === undefined && age < grace)) continue;
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
 * one), the pid of the Deft that made the store, and `early` when it names no trajectory at all
 * (`writeEarlyOwner`'s); undefined without a readable owner file.
 */
async function ownerOf(
  store: string,
): Promise<
  { trajectory?: string; pid?: number; workspace?: string; early?: boolean } | undefined
> {
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
      early: trajectory === undefined,
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
/** The same for a store made early (`writeEarlyOwner`): a session may idle long at its prompt. */
const EARLY_OWNER_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

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

/** Checkpoints cannot be taken or restored: what failed and what to do. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckpointError";
  }
}

/** The size in bytes of `store`'s objects (git count-objects, where `place` runs git). */
export async function storeBytes(place: GitPlace, store: string): Promise<number> {
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, []);
  const r = await place.git(["count-objects", "-v"], env);
  if (!r.ok) throw new CheckpointError(`git count-objects failed: ${r.err.trim()}`);
  const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, "m").exec(r.out)?.[1] ?? 0);
  return (kib("size") + kib("size-pack")) * 1024;
}
