/**
 * Line breaks. The model writes `\n`; files may use `\r\n`, or both. Matching happens on the text
 * with every `\r\n` folded to `\n`, and offsets are mapped back to the file so that each line break
 * the edit does not touch keeps its exact bytes.
 */

/** A text with its CRLF line breaks folded to LF, remembering where each one was. */
export interface FoldedText {
  /** The text with `\r\n` replaced by `\n` (a lone `\r` stays). */
  text: string;
  /** Offsets in `text` of the `\n`s that were `\r\n`, ascending. */
  crlf: number[];
}

/** Line break sequences the editor writes. */
export type LineBreak = "\n" | "\r\n";

/**
 * Folds `raw`'s CRLF line breaks to LF.
 *
 * @example
 * ```ts
 * foldLineBreaks("a\r\nb\nc\r\n"); // { text: "a\nb\nc\n", crlf: [1, 5] }
 * ```
 */
export function foldLineBreaks(raw: string): FoldedText {
  let at = raw.indexOf("\r\n");
  if (at === -1) return { text: raw, crlf: [] };
  const pieces: string[] = [];
  const crlf: number[] = [];
  let from = 0;
  let length = 0;
  while (at !== -1) {
    const piece = raw.slice(from, at);
    pieces.push(piece);
    length += piece.length;
    crlf.push(length);
    from = at + 1; // the `\n` starts the next piece
    at = raw.indexOf("\r\n", from);
  }
  pieces.push(raw.slice(from));
  return { text: pieces.join(""), crlf };
}

/** Folds the line breaks of text the model sent, so it matches a folded file. */
export function foldInput(text: string): string {
  return text.includes("\r\n") ? text.replaceAll("\r\n", "\n") : text;
}

/** The offset in the unfolded text that corresponds to `offset` in the folded one. */
export function unfoldOffset(folded: FoldedText, offset: number): number {
  return offset + countBelow(folded.crlf, offset);
}

/** The break that ended the line whose `\n` is at `offset` of the folded text. */
export function breakAt(folded: FoldedText, offset: number): LineBreak {
  const i = countBelow(folded.crlf, offset);
  return folded.crlf[i] === offset ? "\r\n" : "\n";
}

/**
 * The line break to write for replacement text that lands on `[start, end)` of the folded text:
 * the majority break inside that region; for a region inside one line, that line's own break (or,
 * for a last line without one, the previous line's); `\n` for a file with no line break at all.
 */
export function breakForRegion(folded: FoldedText, start: number, end: number): LineBreak {
  let total = 0;
  for (
    let i = folded.text.indexOf("\n", start);
    i !== -1 && i < end;
    i = folded.text.indexOf("\n", i + 1)
  ) {
    total++;
  }
  if (total > 0) {
    const crlf = countBelow(folded.crlf, end) - countBelow(folded.crlf, start);
    if (crlf * 2 > total) return "\r\n";
    if (crlf * 2 < total) return "\n";
    return breakAt(folded, folded.text.indexOf("\n", start));
  }
  const next = folded.text.indexOf("\n", end);
  if (next !== -1) return breakAt(folded, next);
  const previous = start > 0 ? folded.text.lastIndexOf("\n", start - 1) : -1;
  return previous === -1 ? "\n" : breakAt(folded, previous);
}

/** The 1-based line number of `offset` in `text` (lines split at `\n`). */
export function lineNumberAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

// How many values of ascending `sorted` are below `limit` (binary search).
function countBelow(sorted: readonly number[], limit: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
