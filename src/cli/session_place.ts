/**
 * What `deft run`, `deft interactive` and `deft acp` do alike for where a session works (its
 * workplace, src/agent/workplace.ts): `-w` as the session takes it, and closing the workplace
 * when the session ends — at its end, and on SIGTERM or SIGHUP when the place asks for it (a
 * container Deft started would otherwise be left behind).
 */
import type { Session } from "../agent/session.ts";
import { wantsContainer, type WorkplaceOptions } from "../agent/workplace.ts";
import { workspaceOf } from "./context.ts";
import { onStopSignals } from "./signals.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";

/**
 * The workspace the session starts with: the real path of `-w` (default: the current folder),
 * or, when the flags ask for a container, `-w` as given (a folder inside, resolved there).
 */
export async function sessionWorkspace(opts: WorkplaceOptions): Promise<string> {
  return wantsContainer(opts) ? opts.workingDir ?? "" : await workspaceOf(opts.workingDir);
}

/** Closes the session's workplace (a container removed unless kept), saying so when that fails. */
export async function closeWorkplace(session: Session): Promise<void> {
  try {
    await session.workplace.close(session.baseline);
  } catch (e) {
    session.console.note(`warning: ${(e as Error).message}`);
  }
}

/**
 * Until the returned function is called, SIGTERM and SIGHUP end the session: its tools closed and
 * its workplace closed, then the exit code the signal asks for. Installed only where the
 * workplace asks for it (`closesOnSignals`); elsewhere the command's own handling stands.
 */
export function closeOnSignals(session: Session): () => void {
  if (!session.workplace.closesOnSignals) return () => {};
  let stopping = false;
  return onStopSignals((name, code) => {
    if (stopping) Deno.exit(code);
    stopping = true;
    void (async () => {
      await session.executor.closeTools().catch(() => []);
      // SessionEnd hooks before the workplace goes (they may look into it), each bounded.
      await endSessionHooks(session.hooks, {
        reason: "other",
        deft: `signal ${name}`,
        signal: true,
      }, session);
      await closeWorkplace(session);
      Deno.exit(code);
    })();
  }, ["SIGTERM", "SIGHUP"]);
}
