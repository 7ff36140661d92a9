/** `deft sessions`: the recent sessions of a workspace, newest first, with their ids to resume. */
import { listSessions } from "../trajectory/conversation.ts";
import { workspaceOf } from "./context.ts";
import { writeStderr, writeStdout } from "./io.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalLine } from "../policy/terminal_text.ts";

/** Options of `deft sessions`. */
export interface SessionsOptions {
  workingDir?: string;
  json?: boolean;
  limit?: number;
}

/** Prints the sessions; returns the exit code. */
export async function sessionsCommand(opts: SessionsOptions): Promise<number> {
  const workspace = await workspaceOf(opts.workingDir);
  const sessions = await listSessions(workspace, opts.limit ?? 20);
  if (opts.json) {
    await writeStdout(JSON.stringify(sessions) + "\n");
    return 0;
  }
  if (sessions.length === 0) {
    writeStderr(`no sessions recorded for ${workspace} yet.`);
    return 0;
  }
  const rows = sessions.map((s) => [
    terminalLine(s.id),
    s.started.replace("T", " ").slice(0, 16),
    String(s.steps),
    s.outcome,
    oneLine(s.task),
  ]);
  const header = ["ID", "STARTED (UTC)", "STEPS", "OUTCOME", "TASK"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (row: string[]) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])).join("  ");
  await writeStdout([header, ...rows].map(format).join("\n") + "\n");
  writeStderr(`resume one with: deft run --resume ID, or the latest with deft run --continue`);
  return 0;
}

// Task text is the user's or a planted file's: masked, and made inert for the terminal.
function oneLine(text: string): string {
  const flat = terminalLine(maskOutput(text.replace(/\s+/g, " ").trim()));
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
