/**
 * The session picker of `deft interactive --resume` (no id) and `/resume`: the workspace's recent
 * sessions, numbered, with their date, status and first prompt (masked, and inert on the
 * terminal). The user types a number, or walks the list with the arrow keys and presses Enter.
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

/** Sessions offered at most. */
const OFFERED = 20;

/** One line of the list: number, start (UTC), status, first prompt. */
export function sessionLine(index: number, s: SessionSummary): string {
  const task = terminalLine(maskOutput(s.task.replace(/\s+/g, " ").trim()));
  const first = task.length > 70 ? `${task.slice(0, 69)}…` : task;
  const started = terminalLine(s.started.replace("T", " ").slice(0, 16));
  return `${String(index + 1).padStart(2)}. ${started}  ${s.outcome.padEnd(11)} ${first}`;
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
  const sessions = await listSessions(place, OFFERED);
  if (sessions.length === 0) {
    write(`no earlier session in ${terminalLine(placeText(place))}.`);
    return undefined;
  }
  return await chooseSession(sessions, reader, write);
}

/**
 * Shows `sessions` (newest first) and asks until the answer is one of their numbers (1 to their
 * count) or a line of the list; anything else, `0` included, is said to be wrong and asked again.
 * Its id (or trajectory path), or undefined when the user answers nothing.
 */
export async function chooseSession(
  sessions: readonly SessionSummary[],
  reader: Pick<LineReader, "choose">,
  write: (text: string) => void,
): Promise<string | undefined> {
  const lines = sessions.map((s, i) => sessionLine(i, s));
  // The newest next to the prompt: the up arrow walks up the list from it.
  write(["Sessions (newest last):", ...[...lines].reverse()].join("\n"));
  for (;;) {
    const answer = await reader.choose(
      `resume which? (1-${lines.length}, ↑/↓ then Enter; empty: none)> `,
      lines,
    );
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
    write(`'${terminalLine(text)}' is not one of 1-${lines.length}.`);
  }
}
