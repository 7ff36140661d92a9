/**
 * `deft checkpoints [SESSION] [--json]`: a session's checkpoints (src/agent/checkpoints.ts),
 * oldest first — number, time, files changed, label — for `deft rewind --to N`.
 * `deft checkpoints rm [SESSION]` deletes a session's checkpoint store (its trajectory stays);
 * `--prune` removes the stores of sessions that no longer exist.
 */
import {
  CheckpointError,
  removeCheckpointStore,
  sweepCheckpointStores,
} from "../agent/checkpoints.ts";
import { workspaceOf } from "./context.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";
import { sessionToRewind } from "./rewind.ts";
import { terminalLine } from "../policy/terminal_text.ts";

/** Options of `deft checkpoints`. */
export interface CheckpointsOptions {
  workingDir?: string;
  json?: boolean;
  prune?: boolean;
}

/** Prints the checkpoints (or removes them: `rm`, `--prune`); returns the exit code. */
export async function checkpointsCommand(
  session: string | undefined,
  opts: CheckpointsOptions,
  more?: string,
): Promise<number> {
  if (opts.prune) {
    if (session !== undefined) throw new UsageError("--prune takes no session.");
    const removed = await sweepCheckpointStores({ look: 100_000, remove: 100_000, minAgeMs: 0 });
    writeStderr(
      removed.length === 0
        ? "no checkpoint store of a removed session."
        : `removed the checkpoints of ${removed.length} session(s) that no longer exist: ` +
          removed.join(", "),
    );
    return 0;
  }
  const workspace = await workspaceOf(opts.workingDir);
  if (session === "rm") return await removeCheckpoints(more, workspace);
  if (more !== undefined) throw new UsageError(`unexpected argument '${terminalLine(more)}'.`);
  const { trajectory } = await sessionToRewind(session, workspace);
  const checkpoints = trajectory.checkpoints ?? [];
  if (opts.json) {
    await writeStdout(
      JSON.stringify({
        session_id: trajectory.session_id,
        checkpoints,
        rewinds: trajectory.rewinds ?? [],
      }) +
        "\n",
    );
    return 0;
  }
  if (checkpoints.length === 0) {
    writeStderr(`session ${trajectory.session_id} has no checkpoints.`);
    return 0;
  }
  const rows = checkpoints.map((c) => [
    String(c.id),
    c.time.replace("T", " ").slice(0, 19),
    String(c.files_changed),
    terminalLine(c.label) + (c.left_out ? ` (${c.left_out.length} large file(s) not held)` : ""),
  ]);
  const header = ["#", "TIME (UTC)", "FILES", "LABEL"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (row: string[]) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])).join("  ");
  await writeStdout([header, ...rows].map(format).join("\n") + "\n");
  writeStderr(`go back with: deft rewind ${trajectory.session_id} --to N (N from the # column)`);
  return 0;
}

/** `deft checkpoints rm [SESSION]`: the store goes; the trajectory keeps its conversation. */
async function removeCheckpoints(session: string | undefined, workspace: string): Promise<number> {
  const { trajectory } = await sessionToRewind(session, workspace);
  const id = trajectory.session_id;
  if (!id) throw new UsageError("that session has no id, so it has no checkpoint store.");
  try {
    const removed = await removeCheckpointStore(id);
    writeStderr(
      removed
        ? `removed the checkpoints of session ${id}; its files can no longer be rewound ` +
          "(deft rewind --conversation still cuts its conversation)."
        : `session ${id} has no checkpoint store here` +
          (trajectory.container ? " (a container session keeps them inside the container)." : "."),
    );
    return 0;
  } catch (e) {
    if (e instanceof CheckpointError) throw new UsageError(e.message);
    throw e;
  }
}
