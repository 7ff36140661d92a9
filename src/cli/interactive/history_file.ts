/**
 * The composer's history across sessions: one JSON string per line in Deft's state folder (so an
 * input spanning lines stays whole), appended to as inputs arrive and rewritten to its last
 * `HISTORY_SIZE` entries once it holds twice that. It is a convenience: a file that cannot be
 * read starts an empty history, and a failed write never fails a turn.
 */
import { dirname } from "node:path";
import { readOwnText } from "../../policy/own_file.ts";

/** Entries kept in the history file. */
export const HISTORY_SIZE = 1000;
/** Largest history file read (a thousand entries, pastes among them); a larger one is ignored. */
const MAX_HISTORY_BYTES = 64 * 1024 * 1024;

/** The entries of the history file at `path`, oldest first; none when it cannot be read. */
export async function readHistory(path: string): Promise<string[]> {
  try {
    return parseHistory(await readOwnText(path, { limit: MAX_HISTORY_BYTES, what: "the history" }));
  } catch {
    return []; // no history yet, or unreadable: start empty
  }
}

/**
 * Adds `input` to the history file at `path`; `kept` is the session's list of what it wrote
 * (the file is rewritten from it when it grew past twice its size). Returns the list to keep.
 */
export async function rememberInput(
  path: string,
  kept: string[],
  input: string,
): Promise<string[]> {
  kept.push(input);
  try {
    await Deno.mkdir(dirname(path), { recursive: true });
    if (kept.length > HISTORY_SIZE * 2) {
      kept = kept.slice(-HISTORY_SIZE);
      await Deno.writeTextFile(path, kept.map(encode).join(""), { mode: 0o600 });
    } else {
      await Deno.writeTextFile(path, encode(input), { append: true, mode: 0o600 });
    }
  } catch { /* history is a convenience; never fail a turn over it */ }
  return kept;
}

function encode(input: string): string {
  return JSON.stringify(input) + "\n";
}

function parseHistory(text: string): string[] {
  const entries: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const value = JSON.parse(line);
      if (typeof value === "string") entries.push(value);
    } catch {
      entries.push(line);
    }
  }
  return entries.slice(-HISTORY_SIZE);
}
