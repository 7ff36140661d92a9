/** `insert`: new lines after line `insert_line`, as a byte splice. */
import { FileToolError } from "../fs/errors.ts";
import { foldInput, type LineBreak } from "./line_breaks.ts";
import type { Splice } from "./splice.ts";
import { decodeText, encodeFor, type TextFile } from "./text_file.ts";

/** A planned insertion: the splice and the 1-based line of the file it starts on. */
export interface InsertPlan {
  splice: Splice;
  line: number;
}

/**
 * Plans inserting `newStr` as whole lines after line `insertLine` (0 = before the first line).
 *
 * The rule keeps every line the model wrote: `newStr` is split at `\n` into lines, and one
 * trailing `\n` only ends its last line (so `"X"` and `"X\n"` insert one line, `"X\n\n"` inserts
 * `X` and a blank line). After a last line that has no line break, the break is added before the
 * new text and the file then ends exactly as `newStr` ends. The new lines use the line break of
 * the line they follow (or precede, at the top).
 */
export function planInsert(file: TextFile, insertLine: number, newStr: string): InsertPlan {
  const decoded = decodeText(file);
  const { text } = decoded;
  const total = countBreaks(text);
  const unterminated = text.length > 0 && !text.endsWith("\n");
  const lineCount = total + (unterminated ? 1 : 0);
  if (!Number.isInteger(insertLine) || insertLine < 0 || insertLine > lineCount) {
    throw new FileToolError(
      `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines ` +
        `of the file: [0, ${lineCount}]`,
    );
  }
  const body = foldInput(newStr);
  const asLines = body.endsWith("\n") ? body.slice(0, -1) : body;
  const at = (index: number, inserted: string, line: number): InsertPlan => {
    const offset = decoded.byteOffset(index);
    return {
      splice: { start: offset, end: offset, insert: encodeFor(file, inserted, "`new_str`") },
      line,
    };
  };
  if (insertLine === 0) {
    const lineBreak = breakOf(text, text.indexOf("\n"));
    return at(0, withBreaks(asLines, lineBreak) + lineBreak, 1);
  }
  if (insertLine <= total) {
    const after = nthBreak(text, insertLine);
    const lineBreak = breakOf(text, after);
    return at(after + 1, withBreaks(asLines, lineBreak) + lineBreak, insertLine + 1);
  }
  // After a last line without a line break: it gets the previous line's break, and the file ends
  // as `new_str` does (a trailing blank line the model wrote is kept).
  const lineBreak = breakOf(text, text.lastIndexOf("\n"));
  return at(text.length, lineBreak + withBreaks(body, lineBreak), insertLine);
}

function withBreaks(text: string, lineBreak: LineBreak): string {
  return lineBreak === "\n" ? text : text.replaceAll("\n", lineBreak);
}

// The line break whose `\n` is at `at` (-1: none, so the default `\n`).
function breakOf(text: string, at: number): LineBreak {
  return at > 0 && text[at - 1] === "\r" ? "\r\n" : "\n";
}

function countBreaks(text: string): number {
  let n = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) n++;
  return n;
}

// Offset of the `n`th `\n` (1-based); the caller made sure there are that many.
function nthBreak(text: string, n: number): number {
  let at = -1;
  for (let i = 0; i < n; i++) at = text.indexOf("\n", at + 1);
  return at;
}
