/**
 * `--continue` and `--resume ID|FILE`: which earlier session a command goes on with, and its
 * rebuilt conversation. Problems become usage errors that say what to do.
 */
import type { LLMMessage } from "../llm/types.ts";
import {
  latestSession,
  loadResumable,
  rebuildConversation,
  ResumeError,
} from "../trajectory/conversation.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import { workspaceOf } from "./context.ts";
import { UsageError } from "./io.ts";

/** The options that pick a session to resume. */
export interface ResumeOptions {
  continue?: boolean;
  resume?: string;
  workingDir?: string;
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

/** The session `opts` asks to resume, or undefined when it asks for none. */
export async function resumeTarget(opts: ResumeOptions): Promise<Resumed | undefined> {
  if (opts.continue && opts.resume !== undefined) {
    throw new UsageError("give either --continue or --resume, not both.");
  }
  if (!opts.continue && opts.resume === undefined) return undefined;
  const workspace = await workspaceOf(opts.workingDir);
  let ref = opts.resume;
  if (opts.continue) {
    const latest = await latestSession(workspace);
    if (!latest) {
      throw new UsageError(
        `--continue: no earlier session in ${workspace}. Start one with deft run "TASK"; ` +
          `deft sessions lists what there is.`,
      );
    }
    ref = latest.path;
  }
  try {
    const { path, trajectory } = await loadResumable(ref!, workspace);
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
