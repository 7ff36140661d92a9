/**
 * `deft sessions`: the recent sessions of a workspace, newest first, with their ids to resume.
 * A helper session (`/init`) is shown under the conversation it was typed in (marked, when that
 * one is not listed); a conversation compacted with /compact says which session goes on from it.
 * A session still running lists its background shells under its row (id, status, command).
 */
import { listSessions, type SessionSummary } from "../trajectory/conversation.ts";
import { workspaceOf } from "./workspace_arg.ts";
import { UsageError, writeStderr, writeStdout } from "./io.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalLine, terminalText } from "../policy/terminal_text.ts";
import { type PublishedShell, readShellBoard } from "../agent/shell_board.ts";

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
  // A live session's background shells, as it publishes them (agent/shell_board.ts).
  const shells = new Map<string, PublishedShell[]>();
  for (const s of sessions) {
    const live = await readShellBoard(
      s.path,
      (why) =>
        writeStderr(`skipped the background shells of ${terminalLine(s.id)}: ${terminalLine(why)}`),
    );
    if (live.length > 0) shells.set(s.path, live);
  }
  if (opts.json) {
    const listed = sessions.map((s) => {
      const live = shells.get(s.path);
      return live ? { ...s, background_shells: live } : s;
    });
    await writeStdout(inertJson(listed) + "\n");
    return 0;
  }
  if (sessions.length === 0) {
    writeStderr(`no sessions recorded for ${terminalLine(workspace)} yet.`);
    return 0;
  }
  const listed = grouped(sessions);
  // Every cell is read from a file a hostile repository or model may have written: inert.
  const rows = listed.map(({ session: s, under }) => [
    (under ? "└ " : "") + terminalLine(s.id),
    terminalLine(s.started.replace("T", " ").slice(0, 16)),
    terminalLine(String(s.checkpoints ?? 0)),
    terminalLine(String(s.steps)),
    terminalLine(s.outcome),
    taskText(s, under),
  ]);
  const header = ["ID", "STARTED (UTC)", "CHECKPOINTS", "STEPS", "OUTCOME", "TASK"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const format = (row: string[]) =>
    row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])).join("  ");
  // Each live session's background shells on lines of their own under its row.
  const lines = [format(header)];
  listed.forEach(({ session }, i) => {
    lines.push(format(rows[i]));
    for (const shell of shells.get(session.path) ?? []) {
      const [id, status, started, command] = [shell.id, shell.status, shell.started, shell.command]
        .map((field) => terminalLine(field));
      lines.push(`  background shell ${id}  ${status}  started ${started}  ${command}`);
    }
  });
  await writeStdout(lines.join("\n") + "\n");
  writeStderr(
    "resume one with: deft resume ID (or deft run --resume ID), the latest conversation with " +
      "deft -c (helper sessions are never taken for it)",
  );
  return 0;
}

/**
 * `deft sessions rm ID…`: removes each session's trajectory and its checkpoint store (the
 * sessions of this workspace only). Returns the exit code: 1 when one could not be removed.
 */
export async function sessionsRemoveCommand(
  action: string,
  ids: readonly string[],
  opts: Pick<SessionsOptions, "workingDir">,
): Promise<number> {
  if (action !== "rm") {
    throw new UsageError(`'${terminalLine(action)}' is not an action of deft sessions (rm).`);
  }
  if (ids.length === 0) throw new UsageError("deft sessions rm ID…: name the sessions to remove.");
  const workspace = await workspaceOf(opts.workingDir);
  // Loaded here: a plain `deft sessions` starts without them.
  const { removeSession, ResumeError } = await import("../trajectory/conversation.ts");
  const { CheckpointError, removeCheckpointStore } = await import("../agent/checkpoints.ts");
  let code = 0;
  for (const id of ids) {
    try {
      const { path, trajectory } = await removeSession(id, workspace);
      const sessionId = trajectory.session_id;
      const store = sessionId ? await removeCheckpointStore(sessionId) : false;
      writeStderr(
        `removed session ${terminalLine(sessionId ?? id)} (${terminalLine(path)})` +
          (store ? " and its checkpoints" : ""),
      );
    } catch (e) {
      if (!(e instanceof ResumeError || e instanceof CheckpointError)) throw e;
      writeStderr(`deft sessions rm: ${terminalLine(e.message)}`);
      code = 1;
    }
  }
  return code;
}

/**
 * `value` as JSON whose text holds nothing a terminal obeys: JSON escapes C0 controls itself but
 * leaves DEL, the C1 controls (0x9b is a one-byte CSI on some terminals) and bidi or zero-width
 * characters raw. The sanitiser spells them `\xNN` or `\uNNNN`; each `\xNN` it made (never
 * one of the text's own escaped backslashes, matched pairwise first) becomes `\u00NN`, so a JSON
 * reader gets the same strings.
 */
function inertJson(value: unknown): string {
  const escaped = terminalText(JSON.stringify(value), { style: "escape" });
  return escaped.replace(/\\\\|\\x([0-9a-f]{2})/g, (m, hex) => hex ? `\\u00${hex}` : m);
}

/** The sessions in order, each helper moved right under its conversation when that is listed. */
function grouped(
  sessions: readonly SessionSummary[],
): { session: SessionSummary; under: boolean }[] {
  const listed = new Set(sessions.map((s) => s.path));
  const parentOf = (s: SessionSummary) => s.helper_of?.path ?? undefined;
  const rows: { session: SessionSummary; under: boolean }[] = [];
  for (const s of sessions) {
    const parent = parentOf(s);
    if (parent !== undefined && listed.has(parent)) continue;
    rows.push({ session: s, under: false });
    for (const helper of sessions.filter((h) => parentOf(h) === s.path)) {
      rows.push({ session: helper, under: true });
    }
  }
  return rows;
}

function taskText(s: SessionSummary, under: boolean): string {
  if (s.helper_of) {
    const of = under || s.helper_of.session_id === null
      ? ""
      : ` of ${terminalLine(s.helper_of.session_id)}`;
    return `(${oneLine(s.helper_of.command)} helper${of})`;
  }
  const compacted = s.compacted_into
    ? ` (compacted: goes on in ${terminalLine(s.compacted_into)})`
    : s.compacted
    ? " (compacted: goes on from the /compact summary)"
    : "";
  return oneLine(s.task) + compacted;
}

// Task text is the user's or a planted file's: masked, and made inert for the terminal.
function oneLine(text: string): string {
  const flat = terminalLine(maskOutput(text.replace(/\s+/g, " ").trim()));
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
