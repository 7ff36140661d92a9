/**
 * Near misses the editors answer with a hint: a relative path (where the model probably meant the
 * same path under the workspace) and an `old_str` that does not occur in the file.
 *
 * When `old_str` does not occur in the file, find where the model probably meant, so it can copy
 * the exact text instead of guessing again. Most misses are whitespace (tabs vs spaces, trailing
 * blanks, indentation), so whitespace is made visible in the answer.
 */

import { isAbsolute, relative, resolve, sep } from "node:path";

// Candidates shown at most.
const MAX_CANDIDATES = 3;
// Lines of one candidate (and of old_str) shown at most.
const MAX_SHOWN_LINES = 20;
// Fuzzy scoring reads every line; past this many lines only whitespace-insensitive hits count.
const FUZZY_MAX_FILE_LINES = 100_000;
// A candidate must be at least this alike (0..1) to be worth showing.
const MIN_SIMILARITY = 0.5;

// A window of file lines that resembles `old_str`.
interface Candidate {
  /** 0-based index of the first line. */
  start: number;
  lines: number;
  /** 1 for "equal but for whitespace", else a similarity in 0..1. */
  score: number;
  whitespaceOnly: boolean;
}

/**
 * The error for a relative `path`: it names the workspace path the model probably meant, but only
 * when that path stays inside the workspace. A path that climbs out (`../etc/passwd`) gets no
 * suggestion, since following it would only earn a refusal (or invite a retry outside).
 */
export function relativePathError(prefix: string, path: string, workspace: string): string {
  const meant = resolve(workspace, path);
  const inside = relative(workspace, meant);
  if (inside === ".." || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    return `${prefix} Paths must be absolute and inside the workspace ${workspace}; ` +
      `${path} leads outside it.`;
  }
  return `${prefix} Maybe you meant ${meant}?`;
}

/**
 * Text to append to a "did not appear verbatim" error: the closest matching lines of `text` (both
 * with `\n` line breaks) with their numbers and whitespace made visible, or advice when nothing is
 * close.
 */
export function describeNearMisses(text: string, oldStr: string): string {
  const wanted = meaningfulLines(oldStr);
  if (wanted.length === 0) return "";
  const fileLines = text.split("\n");
  let candidates = whitespaceInsensitiveMatches(fileLines, wanted);
  if (candidates.length === 0 && fileLines.length <= FUZZY_MAX_FILE_LINES) {
    candidates = similarWindows(fileLines, wanted);
  }
  if (candidates.length === 0) {
    return "\nNo similar lines were found. View the file (or search it with `grep -n` in bash) " +
      "to find the exact text, then retry.";
  }
  const blocks = candidates.map((c) => {
    const what = c.whitespaceOnly
      ? "the same text except for whitespace"
      : `${Math.round(c.score * 100)}% alike`;
    const range = c.lines === 1
      ? `line ${c.start + 1}`
      : `lines ${c.start + 1}-${c.start + c.lines}`;
    return `Closest match at ${range} (${what}):\n${numbered(fileLines, c.start, c.lines)}`;
  });
  const showOld = candidates.some((c) => c.whitespaceOnly) ||
    wanted.some((line) => showWhitespace(line) !== line);
  const legend = "Whitespace is shown as → for a tab and · for a space at the start or end of a " +
    "line; those marks are not in the file.";
  const old = showOld ? `\nYour old_str, shown the same way:\n${shownOld(wanted)}` : "";
  return `\n${blocks.join("\n")}\n${legend}${old}\nCopy the text exactly as the file has it ` +
    `and retry.`;
}

/** Makes tabs and leading/trailing spaces visible (plus no-break spaces and lone CRs). */
export function showWhitespace(line: string): string {
  let start = 0;
  while (start < line.length && (line[start] === " " || line[start] === "\t")) start++;
  let end = line.length;
  while (end > start && (line[end - 1] === " " || line[end - 1] === "\t")) end--;
  const edge = (s: string) => s.replaceAll(" ", "·").replaceAll("\t", "→");
  const middle = line.slice(start, end).replaceAll("\t", "→").replaceAll("\u00a0", "⍽")
    .replaceAll("\r", "␍");
  return edge(line.slice(0, start)) + middle + edge(line.slice(end));
}

// old_str's lines without the empty first/last ones a trailing or leading `\n` produces.
function meaningfulLines(oldStr: string): string[] {
  const lines = oldStr.split("\n");
  while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
  while (lines.length > 0 && lines[0].trim() === "") lines.shift();
  return lines;
}

function squash(line: string): string {
  return line.replace(/\s+/g, "");
}

// Windows whose lines equal old_str's lines once all whitespace is removed.
function whitespaceInsensitiveMatches(fileLines: string[], wanted: string[]): Candidate[] {
  const keys = wanted.map(squash);
  const anchor = keys.findIndex((k) => k !== "");
  if (anchor === -1) return [];
  const found: Candidate[] = [];
  for (let i = anchor; i < fileLines.length && found.length < MAX_CANDIDATES; i++) {
    if (squash(fileLines[i]) !== keys[anchor]) continue;
    const start = i - anchor;
    if (start + keys.length > fileLines.length) break;
    if (keys.every((k, j) => squash(fileLines[start + j]) === k)) {
      found.push({ start, lines: keys.length, score: 1, whitespaceOnly: true });
      i = start + keys.length - 1;
    }
  }
  return found;
}

// The windows most similar to old_str, anchored on its longest line.
function similarWindows(fileLines: string[], wanted: string[]): Candidate[] {
  const span = Math.min(wanted.length, fileLines.length);
  let anchor = 0;
  for (let j = 1; j < span; j++) {
    if (wanted[j].trim().length > wanted[anchor].trim().length) anchor = j;
  }
  const wantedGrams = wanted.slice(0, span).map((line) => bigrams(normalise(line)));
  const anchorGrams = wantedGrams[anchor];
  if (anchorGrams.total === 0) return [];
  const starts = new Map<number, number>();
  for (let i = 0; i < fileLines.length; i++) {
    const line = normalise(fileLines[i]);
    if (!lengthsComparable(anchorGrams.total, line.length - 1)) continue;
    const score = dice(anchorGrams, bigrams(line));
    if (score < MIN_SIMILARITY) continue;
    const start = Math.max(0, Math.min(i - anchor, fileLines.length - span));
    starts.set(start, Math.max(starts.get(start) ?? 0, score));
  }
  const ranked = [...starts.keys()]
    .map((start) => ({ start, score: windowScore(fileLines, wantedGrams, start) }))
    .filter((c) => c.score >= MIN_SIMILARITY)
    .sort((a, b) => b.score - a.score || a.start - b.start);
  // Far weaker candidates than the best only distract.
  const best = ranked[0]?.score ?? 0;
  const chosen: Candidate[] = [];
  for (const c of ranked) {
    if (c.score < best - 0.2) break;
    if (chosen.some((o) => Math.abs(o.start - c.start) < span)) continue;
    chosen.push({ start: c.start, lines: span, score: c.score, whitespaceOnly: false });
    if (chosen.length === MAX_CANDIDATES) break;
  }
  return chosen;
}

function windowScore(fileLines: string[], wanted: Bigrams[], start: number): number {
  let sum = 0;
  for (let j = 0; j < wanted.length; j++) {
    const line = normalise(fileLines[start + j] ?? "");
    // Checked before counting bigrams, so a huge minified line costs nothing here.
    if (lengthsComparable(wanted[j].total, Math.max(0, line.length - 1))) {
      sum += dice(wanted[j], bigrams(line));
    }
  }
  return sum / wanted.length;
}

function normalise(line: string): string {
  return line.trim().replace(/\s+/g, " ");
}

interface Bigrams {
  counts: Map<number, number>;
  total: number;
}

function bigrams(s: string): Bigrams {
  const counts = new Map<number, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const key = (s.charCodeAt(i) << 16) | s.charCodeAt(i + 1);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return { counts, total: Math.max(0, s.length - 1) };
}

// Dice coefficient of two bigram multisets; two empty strings are alike.
function dice(a: Bigrams, b: Bigrams): number {
  if (a.total === 0 && b.total === 0) return 1;
  if (a.total === 0 || b.total === 0) return 0;
  if (!lengthsComparable(a.total, b.total)) return 0;
  let shared = 0;
  for (const [key, count] of a.counts) shared += Math.min(count, b.counts.get(key) ?? 0);
  return (2 * shared) / (a.total + b.total);
}

// False when bigram counts differ so much that the Dice coefficient cannot reach the bar.
function lengthsComparable(a: number, b: number): boolean {
  return 2 * Math.min(a, b) >= MIN_SIMILARITY * (a + b);
}

function numbered(fileLines: string[], start: number, count: number): string {
  const shown = Math.min(count, MAX_SHOWN_LINES);
  const out: string[] = [];
  for (let i = start; i < start + shown; i++) {
    out.push(`${String(i + 1).padStart(6)}\t${showWhitespace(fileLines[i])}`);
  }
  if (shown < count) out.push(`   ...\t(${count - shown} more lines)`);
  return out.join("\n");
}

function shownOld(lines: string[]): string {
  const out = lines.slice(0, MAX_SHOWN_LINES).map(showWhitespace);
  if (lines.length > MAX_SHOWN_LINES) {
    out.push(`... (${lines.length - MAX_SHOWN_LINES} more lines)`);
  }
  return out.join("\n");
}
