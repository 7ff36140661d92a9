/**
 * `deft rewind [SESSION] --to N [--files|--conversation|--both] [--force]`: goes back to
 * checkpoint N (src/agent/checkpoints.ts; `deft checkpoints` numbers them) — the workspace's
 * files, the conversation, or both — and records the rewind in the session's trajectory;
 * `deft run --continue --rewind-to N` does the same before going on. The state before is a
 * checkpoint of its own, with a number of its own: rewinding to it undoes the rewind.
 */
import {
  ChangedOutsideError,
  CheckpointError,
  type CheckpointPlace,
  checkpointStoreDir,
  checkStoreOwner,
  hostCheckpointPlace,
  leftAloneText,
  rewind,
  type RewindDone,
} from "../agent/checkpoints.ts";
import type { Workplace } from "../agent/workplace.ts";
import type { LLMMessage } from "../llm/types.ts";
import { terminalLine } from "../policy/terminal_text.ts";
import {
  latestSession,
  loadResumable,
  locateSession,
  rebuildConversation,
  ResumeError,
  sameContainer,
} from "../trajectory/conversation.ts";
import {
  readTrajectory,
  type Trajectory,
  type TrajectoryRecorder,
} from "../trajectory/recorder.ts";
import { workspaceOf } from "./context.ts";
import { knownWidth } from "./console/screen.ts";
import { fitRow } from "./console/wrap.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";

/** Options of `deft rewind`. */
export interface RewindCommandOptions {
  workingDir?: string;
  /** The checkpoint's number. */
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
    if (!(e instanceof ResumeError)) throw e;
    // A container session named outright: its records are on the host, wherever -w is.
    const inContainer = ref !== undefined && await containerSession(ref);
    if (inContainer) return inContainer;
    throw new UsageError(e.message);
  }
}

/** The container session `ref` names, loaded for its own place; undefined for any other. */
async function containerSession(
  ref: string,
): Promise<{ path: string; trajectory: Trajectory } | undefined> {
  try {
    const path = await locateSession(ref);
    const { container, working_dir } = await readTrajectory(path);
    if (!container || typeof working_dir !== "string") return undefined;
    return await loadResumable(path, { workspace: working_dir, container });
  } catch {
    return undefined;
  }
}

/**
 * Rewinds the session recorded at `path` to checkpoint `what.to` and writes its trajectory back.
 * `files`/`conversation`: what to restore. Throws UsageError saying why it cannot (a container
 * session, no such checkpoint, files changed outside Deft without `force`). `workplace`: where
 * the session goes on, when it keeps the session's checkpoints itself (a container the session
 * was recorded in).
 */
export async function rewindSession(
  path: string,
  trajectory: Trajectory,
  workspace: string,
  what: { to: number; files: boolean; conversation: boolean; force?: boolean },
  workplace?: Pick<Workplace, "place" | "recordedCheckpoints">,
): Promise<RewindDone> {
  const recordedIn = trajectory.container;
  const here = workplace?.place.container;
  if (what.files && recordedIn && (!here || !sameContainer(recordedIn.id, here.id))) {
    throw new UsageError(
      `${path} was recorded in the container ${recordedIn.id.slice(0, 12)}, and its ` +
        "checkpoints are kept inside it: its files can be rewound only there, while it is " +
        "alive (kept with --docker-keep): `deft run --continue --rewind-to N " +
        `--docker-container-id ${recordedIn.id.slice(0, 12)}\` or /rewind in an interactive ` +
        "session there. Or rewind only --conversation.",
    );
  }
  if (!trajectory.checkpoints?.length) {
    throw new UsageError(
      `${path} has no checkpoints (taken after each turn unless the config says ` +
        "`checkpoints: false`; in a container, only in a git repository): there is nothing to " +
        "go back to.",
    );
  }
  try {
    const id = trajectory.session_id ?? "unknown";
    if (what.files && workplace?.recordedCheckpoints) {
      const done = await rewind(await workplace.recordedCheckpoints(trajectory), trajectory, what);
      await writeTrajectory(path, trajectory);
      return done;
    }
    if (what.files && !await Deno.lstat(checkpointStoreDir(id)).then(() => true, () => false)) {
      throw new UsageError(
        `the checkpoints of session ${id} were removed (deft checkpoints rm, or swept with its ` +
          "session): its files cannot be rewound. --conversation still cuts the conversation.",
      );
    }
    // The store must be this workspace's before anything is made or written.
    if (what.files) await checkStoreOwner(id, workspace);
    const at = what.files ? await hostCheckpointPlace(workspace, id) : undefined;
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
  if (opts.to === undefined) {
    throw new UsageError(
      "--to N is needed: deft checkpoints lists the checkpoints to go back to, by number.",
    );
  }
  const workspace = await workspaceOf(opts.workingDir);
  const { path, trajectory } = await sessionToRewind(session, workspace);
  const files = opts.files || opts.both || picked === 0;
  const conversation = opts.conversation || opts.both || picked === 0;
  const { target, before, leftAlone } = await rewindSession(path, trajectory, workspace, {
    to: opts.to,
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
        left_alone: leftAlone,
      }) +
        "\n",
    );
    return 0;
  }
  writeStderr(
    `rewound ${
      [files && "the files", conversation && "the conversation"].filter(Boolean)
        .join(" and ")
    } to checkpoint ${target.id} (${terminalLine(target.label)})` +
      (before
        ? `; the state before is checkpoint ${before.id}: deft rewind --to ${before.id} undoes this`
        : ""),
  );
  if (leftAlone.length > 0) writeStderr(`warning: ${terminalLine(leftAloneText(leftAlone))}`);
  return 0;
}

/** Writes `trajectory` back to `path` atomically. */
async function writeTrajectory(path: string, trajectory: Trajectory): Promise<void> {
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(trajectory, null, 2) + "\n");
  await Deno.rename(temp, path);
}

/** What `/rewind` needs of the interactive session. */
export interface RewindContext {
  session: { checkpointPlace?: { at: CheckpointPlace | null } };
  recorder?: TrajectoryRecorder;
  conversation: LLMMessage[];
  write(text: string): void;
  choose?(question: string, options: string[]): Promise<string | null>;
  /** Asks about the rows just written above the question, ↑/↓ marking one (LineReader.select). */
  select?(question: string, rows: string[]): Promise<string | null>;
}

/**
 * `/rewind` in `deft interactive`: a picker of this conversation's checkpoints (number, time,
 * files changed, label), then what to restore (files, conversation, both); a file changed outside
 * Deft since the last checkpoint is named and the user asked before it is overwritten. `arg` may
 * name the checkpoint and what (`/rewind 2 files`) instead.
 */
export async function rewindInteractive(ctx: RewindContext, arg: string): Promise<void> {
  const recorder = ctx.recorder;
  const checkpoints = recorder?.data.checkpoints ?? [];
  if (!recorder || checkpoints.length === 0) {
    ctx.write(
      "no checkpoints in this conversation yet (one is taken after each turn, unless the " +
        "config says `checkpoints: false`).",
    );
    return;
  }
  const [numberWord, whatWord] = arg.trim().split(/\s+/).filter(Boolean);
  let to = numberWord !== undefined && /^\d+$/.test(numberWord) ? Number(numberWord) : undefined;
  if (to === undefined) {
    // A row each (the gutter first, where ↑/↓ draw their mark), the newest next to the question.
    const lines = checkpoints.map((c) =>
      fitRow(
        `  ${String(c.id).padStart(3)}. ${c.time.replace("T", " ").slice(11, 19)}  ` +
          `${String(c.files_changed).padStart(3)} file(s)  ${terminalLine(c.label)}`,
        // Cut to the terminal's width only where the rows are drawn on it (not for an editor).
        ctx.select ? knownWidth() : 0,
      )
    );
    ctx.write(["Checkpoints (number, time UTC, files changed, label):", ...lines].join("\n"));
    if (!ctx.select && !ctx.choose) {
      ctx.write("go back with /rewind N [files|conversation|both].");
      return;
    }
    const question = "rewind to which checkpoint? (number; empty: none)> ";
    const rows = [...lines].reverse();
    const answer = ctx.select
      ? await ctx.select(question, rows)
      : await ctx.choose!(question, rows);
    const text = answer?.trim() ?? "";
    const n = /^\d+$/.test(text) ? Number(text) : Number(/^\s*(\d+)\./.exec(text)?.[1] ?? NaN);
    if (text === "" || Number.isNaN(n)) {
      ctx.write("nothing rewound.");
      return;
    }
    to = n;
  }
  let what = whatWord;
  if (what === undefined && ctx.choose) {
    const answer = await ctx.choose("restore: files, conversation or both? (empty: both)> ", [
      "both",
      "files",
      "conversation",
    ]);
    if (answer === null) {
      ctx.write("nothing rewound.");
      return;
    }
    what = answer.trim() || "both";
  }
  what ??= "both";
  if (!["files", "conversation", "both"].includes(what)) {
    ctx.write(`'${terminalLine(what)}' is not one of files, conversation, both; nothing rewound.`);
    return;
  }
  const files = what !== "conversation";
  const conversation = what !== "files";
  const at = ctx.session.checkpointPlace?.at ?? undefined;
  const options = { to, files, conversation };
  let done: RewindDone;
  try {
    try {
      done = await rewind(at, recorder.data, options);
    } catch (e) {
      if (!(e instanceof ChangedOutsideError)) throw e;
      const answer = ctx.choose
        ? await ctx.choose(
          `${e.files.join(", ")} changed outside Deft since the last turn; overwrite? (y/N)> `,
          ["y", "n"],
        )
        : null;
      if (!/^y(es)?$/i.test(answer?.trim() ?? "")) {
        ctx.write(`${e.message}\nnothing rewound.`);
        return;
      }
      done = await rewind(at, recorder.data, { ...options, force: true });
    }
  } catch (e) {
    ctx.write(`cannot rewind: ${(e as Error).message}`);
    return;
  } finally {
    recorder.flush();
  }
  if (conversation) {
    ctx.conversation = rebuildConversation(recorder.data);
    // The next turn records only what follows the cut conversation.
    const last = ctx.conversation.at(-1);
    if (last) recorder.markRecorded(last);
  }
  ctx.write(
    `rewound ${
      files && conversation
        ? "the files and the conversation"
        : files
        ? "the files"
        : "the conversation"
    } ` +
      `to checkpoint ${done.target.id} (${terminalLine(done.target.label)})` +
      (done.before ? `; /rewind ${done.before.id} undoes this.` : ".") +
      (done.leftAlone.length > 0 ? `\n${terminalLine(leftAloneText(done.leftAlone))}` : ""),
  );
}
