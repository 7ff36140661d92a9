/**
 * `deft rewind [SESSION] --to TURN [--files|--conversation|--both] [--force]`: goes back to a
 * turn's checkpoint (src/agent/checkpoints.ts) — the workspace's files, the conversation, or
 * both — and records the rewind in the session's trajectory; `deft run --continue --rewind-to`
 * does the same before going on. The state before is a checkpoint: rewinding to its turn undoes
 * the rewind.
 */
import {
  ChangedOutsideError,
  CheckpointError,
  hostCheckpointPlace,
  rewind,
} from "../agent/checkpoints.ts";
import { latestSession, loadResumable, ResumeError } from "../trajectory/conversation.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import { workspaceOf } from "./context.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft rewind`. */
export interface RewindCommandOptions {
  workingDir?: string;
  to: number;
  files?: boolean;
  conversation?: boolean;
  both?: boolean;
  force?: boolean;
  json?: boolean;
}

/** The session `ref` names (default: the workspace's latest conversation), checked for `workspace`. */
export async function sessionToRewind(
  ref: string | undefined,
  workspace: string,
): Promise<{ path: string; trajectory: Trajectory }> {
  try {
    const path = ref ?? (await latestSession(workspace))?.path;
    if (!path) {
      throw new UsageError(`no session recorded in ${workspace} yet; deft sessions lists them.`);
    }
    return await loadResumable(path, workspace);
  } catch (e) {
    if (e instanceof ResumeError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * Rewinds the session recorded at `path` and writes its trajectory back. `files`/`conversation`:
 * what to restore. Throws UsageError saying why it cannot (a container session, no checkpoint of
 * that turn, files changed outside Deft without `force`).
 */
export async function rewindSession(
  path: string,
  trajectory: Trajectory,
  workspace: string,
  what: { turn: number; files: boolean; conversation: boolean; force?: boolean },
): Promise<Awaited<ReturnType<typeof rewind>>> {
  if (what.files && trajectory.container) {
    throw new UsageError(
      `${path} was recorded in a container, and its checkpoints are kept inside it: rewind ` +
        "its files from an interactive session there (/rewind), or rewind only --conversation.",
    );
  }
  if (!trajectory.checkpoints?.length) {
    throw new UsageError(
      `${path} has no checkpoints (taken after each turn unless the config says ` +
        "`checkpoints: false`, and only in a git repository): there is nothing to go back to.",
    );
  }
  try {
    const at = what.files
      ? await hostCheckpointPlace(workspace, trajectory.session_id ?? "unknown")
      : undefined;
    const done = await rewind(at, trajectory, what);
    await writeTrajectory(path, trajectory);
    return done;
  } catch (e) {
    if (e instanceof ChangedOutsideError) {
      // The checkpoint of the state then is kept: nothing else changed.
      throw new UsageError(e.message);
    }
    if (e instanceof CheckpointError) throw new UsageError(e.message);
    throw e;
  }
}

/** `deft rewind`; returns the exit code. */
export async function rewindCommand(
  session: string | undefined,
  opts: RewindCommandOptions,
): Promise<number> {
  const picked = [opts.files, opts.conversation, opts.both].filter(Boolean).length;
  if (picked > 1) throw new UsageError("give one of --files, --conversation, --both.");
  if (!Number.isInteger(opts.to) || opts.to < 0) {
    throw new UsageError(`--to takes a turn number (0: the session's start), got ${opts.to}.`);
  }
  const workspace = await workspaceOf(opts.workingDir);
  const { path, trajectory } = await sessionToRewind(session, workspace);
  const files = opts.files || opts.both || picked === 0;
  const conversation = opts.conversation || opts.both || picked === 0;
  const { target, before } = await rewindSession(path, trajectory, workspace, {
    turn: opts.to,
    files,
    conversation,
    force: opts.force,
  });
  if (opts.json) {
    await writeStdout(
      JSON.stringify({
        session_id: trajectory.session_id,
        to: target,
        before,
        files,
        conversation,
      }) +
        "\n",
    );
    return 0;
  }
  writeStderr(
    `rewound ${
      [files && "the files", conversation && "the conversation"].filter(Boolean)
        .join(" and ")
    } to turn ${target.turn} (${target.label})` +
      (before
        ? `; the state before is checkpoint ${before.id}: deft rewind --to ${before.turn} undoes this`
        : ""),
  );
  return 0;
}

/** Writes `trajectory` back to `path` atomically. */
async function writeTrajectory(path: string, trajectory: Trajectory): Promise<void> {
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(trajectory, null, 2) + "\n");
  await Deno.rename(temp, path);
}
