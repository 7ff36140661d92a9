/**
 * `deft checkpoints [SESSION] [--json]`: a session's checkpoints (src/agent/checkpoints.ts),
 * oldest first — turn, label, files changed, time — for `deft rewind --to TURN`.
 */
import { workspaceOf } from "./context.ts";
import { writeStderr, writeStdout } from "./io.ts";
import { sessionToRewind } from "./rewind.ts";
import { terminalLine } from "../policy/terminal_text.ts";

/** Options of `deft checkpoints`. */
export interface CheckpointsOptions {
  workingDir?: string;
  json?: boolean;
}

/** Prints the checkpoints; returns the exit code. */
export async function checkpointsCommand(
  session: string | undefined,
  opts: CheckpointsOptions,
): Promise<number> {
  const workspace = await workspaceOf(opts.workingDir);
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
    String(c.turn),
    c.time.replace("T", " ").slice(0, 19),
    String(c.files_changed),
    terminalLine(c.label) + (c.left_out ? ` (${c.left_out.length} large file(s) not held)` : ""),
  ]);
  const header = ["#", "TURN", "TIME (UTC)", "FILES", "LABEL"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (row: string[]) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])).join("  ");
  await writeStdout([header, ...rows].map(format).join("\n") + "\n");
  writeStderr(`go back with: deft rewind ${trajectory.session_id} --to TURN`);
  return 0;
}
