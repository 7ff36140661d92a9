/** The numbered excerpt shown after an edit: the changed lines and four lines either side. */
import { decode, type Encoding, isUtf16 } from "./encoding.ts";
import { numberLines, splitLines } from "./numbering.ts";
import type { Splice } from "./splice.ts";

/** Lines of context shown before and after the changed lines. */
export const SNIPPET_CONTEXT_LINES = 4;

const LF = 10;

/**
 * The `cat -n` lines of the file as it is after `splice` was applied to `bytes`, from four lines
 * before the change to four lines after it. `line` is the 1-based line of `bytes` that holds
 * `splice.start`.
 */
export function editSnippet(
  bytes: Uint8Array,
  encoding: Encoding,
  splice: Splice,
  line: number,
): string {
  if (isUtf16(encoding.name)) return utf16Snippet(bytes, encoding, splice, line);
  const min = encoding.bomLength;
  let start = lineStart(bytes, splice.start, min);
  let firstLine = line;
  for (let i = 0; i < SNIPPET_CONTEXT_LINES && start > min; i++) {
    start = lineStart(bytes, start - 1, min);
    firstLine--;
  }
  const { insert } = splice;
  // When the new text ends a line, the suffix starts a fresh one; otherwise its first line
  // finishes the changed line.
  const endsLine = insert.length > 0 && insert[insert.length - 1] === LF;
  let end = splice.end;
  for (let i = 0; i < SNIPPET_CONTEXT_LINES + (endsLine ? 0 : 1) && end < bytes.length; i++) {
    const at = bytes.indexOf(LF, end);
    end = at === -1 ? bytes.length : at + 1;
  }
  const before = bytes.subarray(start, splice.start);
  const after = bytes.subarray(splice.end, end);
  const joined = new Uint8Array(before.length + insert.length + after.length);
  joined.set(before, 0);
  joined.set(insert, before.length);
  joined.set(after, before.length + insert.length);
  const numbered = numberLines(splitLines(decode(joined, encoding.name)), firstLine);
  return numbered.clipped
    ? `${numbered.text}\n<response clipped: view the file with \`view_range\` to see the rest>`
    : numbered.text;
}

// Offset where the line holding `offset` starts (never before `min`).
function lineStart(bytes: Uint8Array, offset: number, min: number): number {
  if (offset <= min) return min;
  const at = bytes.lastIndexOf(LF, offset - 1);
  return at < min ? min : at + 1;
}

// The same for UTF-16, whose line breaks are two-byte units: worked out on the decoded text.
function utf16Snippet(bytes: Uint8Array, encoding: Encoding, splice: Splice, line: number): string {
  const before = decode(bytes.subarray(encoding.bomLength, splice.start), encoding.name);
  const inserted = decode(splice.insert, encoding.name);
  const after = decode(bytes.subarray(splice.end), encoding.name);
  let start = before.lastIndexOf("\n") + 1;
  let firstLine = line;
  for (let i = 0; i < SNIPPET_CONTEXT_LINES && start > 0; i++) {
    start = start >= 2 ? before.lastIndexOf("\n", start - 2) + 1 : 0;
    firstLine--;
  }
  const endsLine = inserted.endsWith("\n");
  let end = 0;
  for (let i = 0; i < SNIPPET_CONTEXT_LINES + (endsLine ? 0 : 1) && end < after.length; i++) {
    const at = after.indexOf("\n", end);
    end = at === -1 ? after.length : at + 1;
  }
  const numbered = numberLines(
    splitLines(before.slice(start) + inserted + after.slice(0, end)),
    firstLine,
  );
  return numbered.clipped
    ? `${numbered.text}\n<response clipped: view the file with \`view_range\` to see the rest>`
    : numbered.text;
}
