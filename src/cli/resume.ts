/**
 * `--continue` and `--resume ID|FILE`: which earlier session a command goes on with, and its
 * rebuilt conversation. Problems become usage errors that say what to do. A session is found
 * where it was recorded (its workplace's `place`): a host folder's among the host's sessions, a
 * container's among those of the same workspace in containers of the same image
 * (src/trajectory/conversation.ts).
 */
import type { LLMMessage } from "../llm/types.ts";
import {
  latestSession,
  loadResumable,
  placeText,
  rebuildConversation,
  ResumeError,
  type SessionPlace,
} from "../trajectory/conversation.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import type { Session } from "../agent/session.ts";
import { movedContainerNote, type Workplace } from "../agent/workplace.ts";
import { workspaceOf } from "./context.ts";
import { UsageError } from "./io.ts";

/** The options that pick a session to resume. */
export interface ResumeOptions {
  continue?: boolean;
  resume?: string;
  workingDir?: string;
  /** Before going on, rewind the session's files and conversation to this checkpoint (`deft rewind`). */
  rewindTo?: number;
}

/** An earlier session to go on with. */
export interface Resumed {
  path: string;
  trajectory: Trajectory;
  conversation: LLMMessage[];
  link: NonNullable<Trajectory["resumed_from"]>;
}

/** What the model is told when a resumed run has no new task. */
export const CONTINUE_MESSAGE =
  "The session was resumed. Go on with the task where you stopped; when it is done and " +
  "verified, call task_done.";

/** Where an open session works, as its sessions are recorded (its workplace's place). */
export function sessionPlace(session: Pick<Session, "workplace">): SessionPlace {
  return session.workplace.place;
}

/** Refuses --continue with --resume. */
export function checkResumeOptions(opts: ResumeOptions): void {
  if (opts.continue && opts.resume !== undefined) {
    throw new UsageError("give either --continue or --resume, not both.");
  }
}

/**
 * The session `opts` asks to resume, or undefined when it asks for none. `place` is where the
 * new session works; without it, the host folder `-w` names (default: the current one). `check`
 * may refuse the session (by throwing) before `--rewind-to` changes anything; `workplace`, the
 * new session's, is where `--rewind-to` finds checkpoints kept in the place itself.
 */
export async function resumeTarget(
  opts: ResumeOptions,
  place?: SessionPlace,
  check?: (trajectory: Trajectory) => void,
  workplace?: Workplace,
): Promise<Resumed | undefined> {
  checkResumeOptions(opts);
  if (!opts.continue && opts.resume === undefined) {
    if (opts.rewindTo !== undefined) {
      throw new UsageError("--rewind-to goes with --continue or --resume ID.");
    }
    return undefined;
  }
  const where = place ?? { workspace: await workspaceOf(opts.workingDir) };
  let ref = opts.resume;
  if (opts.continue) {
    const latest = await latestSession(where);
    if (!latest) {
      throw new UsageError(
        `--continue: no earlier session in ${placeText(where)}. Start one with ` +
          `deft run "TASK"; deft sessions lists a host folder's sessions, and --resume ID ` +
          `takes any session of this workspace.`,
      );
    }
    ref = latest.path;
  }
  try {
    const { path, trajectory } = await loadResumable(ref!, where);
    check?.(trajectory);
    if (opts.rewindTo !== undefined) {
      const { rewindSession } = await import("./rewind.ts");
      await rewindSession(path, trajectory, where.workspace, {
        to: opts.rewindTo,
        files: true,
        conversation: true,
      }, workplace);
    }
    return {
      path,
      trajectory,
      conversation: rebuildConversation(trajectory),
      link: { session_id: trajectory.session_id ?? null, path },
    };
  } catch (e) {
    if (e instanceof ResumeError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * The one line that says where a resumed session's files come from when they are not the ones
 * it left (a new container of its image), or undefined (see the workplace's `resumeNote`).
 */
export function resumedContainerNote(resumed: Resumed, place: SessionPlace): string | undefined {
  return movedContainerNote(resumed.trajectory, place);
}
