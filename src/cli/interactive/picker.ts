/**
 * The session picker of `deft interactive --resume` (no id), `deft resume` and `/resume`: the
 * workspace's recent conversations (helper sessions such as `/init`'s left out), numbered, with
 * their date, status, first prompt and the model's last words (masked, and inert on the
 * terminal). The user types a number, moves the mark over the list with the arrow keys and
 * presses Enter, or types words to narrow the list to the conversations that hold them.
 */
import {
  listSessions,
  placeText,
  type SessionPlace,
  type SessionSummary,
} from "../../trajectory/conversation.ts";
import { maskOutput } from "../../policy/secrets.ts";
import { terminalLine } from "../../policy/terminal_text.ts";
import type { LineReader } from "./line_reader.ts";
import { knownWidth } from "../console/screen.ts";
import { fitRow } from "../console/wrap.ts";

/** Sessions offered at most. */
const OFFERED = 20;

/** One line of the list: number, start (UTC), status, first prompt, the model's last words. */
export function sessionLine(index: number, s: SessionSummary): string {
  const first = clipped(s.task, s.last_reply ? 50 : 70);
  const last = s.last_reply ? `  → ${clipped(s.last_reply, 40)}` : "";
  const started = terminalLine(s.started.replace("T", " ").slice(0, 16));
  return `${String(index + 1).padStart(2)}. ${started}  ${s.outcome.padEnd(11)} ${first}${last}`;
}

// Text from the model or the user: masked, inert on the terminal, one line of at most `max`.
function clipped(text: string, max: number): string {
  const flat = terminalLine(maskOutput(text.replace(/\s+/g, " ").trim()));
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The sessions whose id, first prompt or last words hold `words` (case ignored). */
export function matchingSessions(
  sessions: readonly SessionSummary[],
  words: string,
): SessionSummary[] {
  const wanted = words.toLowerCase().split(/\s+/).filter(Boolean);
  return sessions.filter((s) => {
    const text = `${s.id}\n${s.task}\n${s.last_reply ?? ""}`.toLowerCase();
    return wanted.every((w) => text.includes(w));
  });
}

/**
 * Asks which session recorded in `where` (a host folder, or a workspace in a container of an
 * image) to resume; its id (or trajectory path), or undefined when there is none or the user
 * picks none. `write` shows the list and what went wrong.
 */
export async function pickSession(
  where: string | SessionPlace,
  reader: LineReader,
  write: (text: string) => void,
): Promise<string | undefined> {
  const place = typeof where === "string" ? { workspace: where } : where;
  const sessions = await listSessions(place, OFFERED, "conversations");
  if (sessions.length === 0) {
    write(`no earlier session in ${terminalLine(placeText(place))}.`);
    return undefined;
  }
  return await chooseSession(sessions, reader, write, knownWidth());
}

/**
 * Shows `sessions` (newest first) and asks until the answer is one of their numbers (1 to their
 * count) or a line of the list; a number out of range (`0` included) is said to be wrong and
 * asked again; words narrow the list to the sessions that hold them (none: the list stays).
 * The list is drawn right above the question, a row each (clipped to `width` columns when
 * given), the newest lowest: ↑ marks it, ↑ again the one above, and Enter takes the marked one.
 * Its id (or trajectory path), or undefined when the user answers nothing.
 */
export async function chooseSession(
  all: readonly SessionSummary[],
  reader: Pick<LineReader, "select">,
  write: (text: string) => void,
  width = 0,
): Promise<string | undefined> {
  let sessions = all;
  // Each row starts with the gutter where the mark goes.
  const rowsOf = (list: readonly SessionSummary[]) =>
    list.map((s, i) => fitRow(`  ${sessionLine(i, s)}`, width));
  let lines = rowsOf(sessions);
  // The newest next to the prompt; a message (a wrong answer) goes above the list, so the list
  // is always right above the question, where the mark is drawn.
  let title = "Sessions (newest last):";
  let said = "";
  for (;;) {
    // The question stays short enough for one row; how to answer it is said above the list.
    const how = `Type a number (1-${lines.length}), or ↑/↓ then Enter, or words to search; ` +
      "Enter alone: none.";
    write([...(said ? [said] : []), how, title, ...[...lines].reverse()].join("\n"));
    said = "";
    const answer = await reader.select(`resume which? (1-${lines.length})> `, lines);
    if (answer === null || answer.trim() === "") {
      write("no session resumed.");
      return undefined;
    }
    const text = answer.trim();
    const n = /^\d+$/.test(text) ? Number(text) : lines.findIndex((l) => l.trim() === text) + 1;
    if (n >= 1 && n <= sessions.length) {
      const picked = sessions[n - 1];
      return picked.id || picked.path;
    }
    if (/^\d+$/.test(text)) {
      said = `'${terminalLine(text)}' is not one of 1-${lines.length}.`;
      continue;
    }
    const found = matchingSessions(all, text);
    if (found.length === 0) {
      said = `no session holds '${terminalLine(text)}'; the list is as it was.`;
      continue;
    }
    sessions = found;
    lines = rowsOf(sessions);
    title = `Sessions holding '${terminalLine(text)}' (newest last):`;
  }
}
