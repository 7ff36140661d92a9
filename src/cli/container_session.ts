/**
 * What `deft run` and `deft interactive` do alike for a session whose tools run in a container
 * (src/container): `-w` names a folder inside it rather than a host folder, and the container
 * goes when the session ends — at its end, and on SIGTERM or SIGHUP too.
 */
import { type Session, type SessionContainerOptions, wantsContainer } from "../agent/session.ts";
import { workspaceOf } from "./context.ts";
import { onStopSignals } from "./signals.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";

/**
 * The workspace the session starts with: the real path of `-w` (default: the current folder),
 * or, with a container, `-w` as given (a folder inside; the session resolves it there).
 */
export async function sessionWorkspace(opts: SessionContainerOptions): Promise<string> {
  return wantsContainer(opts) ? opts.workingDir ?? "" : await workspaceOf(opts.workingDir);
}

/** Removes the session's container (unless kept), saying so when that fails. */
export async function closeContainer(session: Session): Promise<void> {
  try {
    // The baseline's private store is inside: gone before a kept container is left behind.
    if (session.container) await session.baseline?.dispose();
    await session.container?.close();
  } catch (e) {
    session.console.note(`warning: ${(e as Error).message}`);
  }
}

/**
 * Until the returned function is called, SIGTERM and SIGHUP end the session: its tools closed and
 * its container removed, then the exit code the signal asks for. Without a container nothing is
 * installed (the command's own handling stands).
 */
export function closeContainerOnSignals(session: Session): () => void {
  if (!session.container) return () => {};
  let stopping = false;
  return onStopSignals((name, code) => {
    if (stopping) Deno.exit(code);
    stopping = true;
    void (async () => {
      await session.executor.closeTools().catch(() => []);
      // SessionEnd hooks before the container goes (they may look into it), each bounded.
      await endSessionHooks(session.hooks, {
        reason: "other",
        deft: `signal ${name}`,
        signal: true,
      });
      await closeContainer(session);
      Deno.exit(code);
    })();
  }, ["SIGTERM", "SIGHUP"]);
}
