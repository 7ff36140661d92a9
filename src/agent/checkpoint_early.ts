/**
 * A host session's checkpoint store made, and its sandboxed git (the store's runner,
 * policy/git_runner.ts) started, as soon as the session knows its workspace and sandbox — before
 * its tools, hooks and baseline — so the first checkpoint does not wait for a sandbox to start.
 * The store belongs to a session id chosen then (`EarlyCheckpoints.sessionId`), which the
 * session's first trajectory takes; a session that goes on with another id, or takes no
 * checkpoint at all, has the folder removed (`release`, and when Deft exits). The runner, like
 * every git runner, ends with Deft. Nothing is started without a sandbox (git then starts no
 * runner) and nothing is started by commands that open no session (`deft tool`).
 */
import type { GitSandbox } from "../policy/git.ts";
import { newSessionId } from "../trajectory/recorder.ts";
import { checkpointStoreDir, sweepCheckpointStores, writeEarlyOwner } from "./checkpoint_store.ts";
import { checkpointHostPlace } from "./checkpoint_tree.ts";

/** A store made early, and its runner starting. */
export interface EarlyCheckpoints {
  /** The session id the store is for: the one the session's first trajectory should take. */
  sessionId: string;
  /** Settles (never throws) once the store's sandboxed git has answered once. */
  started: Promise<void>;
  /** Removes the store when no checkpoint was taken in it (the session went on without it). */
  release(): void;
}

/** Stores this process made early in which no checkpoint was begun yet. */
const unused = new Set<string>();
let cleanupInstalled = false;

/**
 * Makes the store of a new session id and starts its sandboxed git in the background; undefined
 * without a sandbox, or when the store cannot be made (the first checkpoint then says why).
 */
export function startCheckpointsEarly(
  workspace: string,
  sandbox: GitSandbox | undefined,
): EarlyCheckpoints | undefined {
  if (!sandbox || sandbox.mode === "none") return undefined;
  const sessionId = newSessionId();
  const store = checkpointStoreDir(sessionId);
  try {
    Deno.mkdirSync(`${store}/objects`, { recursive: true, mode: 0o700 });
    writeEarlyOwner(store, workspace);
  } catch {
    return undefined;
  }
  unused.add(store);
  installCleanup();
  // The command is the cheapest git knows (no config listed, no file read): it is there to
  // have the sandbox started, with the very view and writable store the checkpoints use.
  // Two, as a checkpoint runs two commands side by side (the store's attributes checked while
  // the files are listed; a turn's two listings): the second starts once the first answered,
  // when a command finds it busy. The sweep of stores whose session is gone, which a new store
  // calls for, goes on meanwhile.
  const warm = async () => {
    const place = await checkpointHostPlace(workspace, store, sandbox);
    const once = () => place.git(["rev-parse", "--git-dir"]);
    await once();
    await Promise.all([once(), once()]);
  };
  const started = Promise.all([warm(), sweepCheckpointStores()]).then(() => {}, () => {});
  return { sessionId, started, release: () => removeUnused(store) };
}

/**
 * True when `store` was made early by this process and no checkpoint was begun in it: it is new,
 * and from now on the caller's (neither `release` nor Deft's exit removes it).
 */
export function takeEarlyStore(store: string): boolean {
  return unused.delete(store);
}

function removeUnused(store: string): void {
  if (!unused.delete(store)) return;
  try {
    Deno.removeSync(store, { recursive: true });
  } catch { /* already gone */ }
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  globalThis.addEventListener("unload", () => {
    for (const store of [...unused]) removeUnused(store);
  });
}
