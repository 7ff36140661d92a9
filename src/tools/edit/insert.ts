/** `insert`: new lines after line `insert_line`, as a byte splice. */
import { FileToolError } from "../fs/errors.ts";
import { foldInput, type LineBreak } from "./line_breaks.ts";
import type { Splice } from "./splice.ts";
import { encodeFor, type TextFile } from "./text_file.ts";

/** A planned insertion: the splice and the 1-based line of the file it starts on. */
export interface InsertPlan {
  splice: Splice;
  line: number;
}

const LF = 10;
const CR = 13;

/**
 * Plans inserting `newStr` as whole lines after line `insertLine` (0 = before the first line).
 * A trailing `\n` of `newStr` ends its last line rather than adding an empty one. The new lines
 * use the line break of the line they follow (or precede, at the top); a file without a final
 * line break keeps having none.
 */
export function planInsert(file: TextFile, insertLine: number, newStr: string): InsertPlan {
  const { bytes } = file;
  const contentStart = file.encoding.bomLength;
  const scan = scanBreaks(bytes, contentStart, insertLine);
  const unterminated = bytes.length > contentStart && bytes[bytes.length - 1] !== LF;
  const lineCount = scan.total + (unterminated ? 1 : 0);
  if (insertLine < 0 || insertLine > lineCount) {
    throw new FileToolError(
      `Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines ` +
        `of the file: [0, ${lineCount}]`,
    );
  }
  let text = foldInput(newStr);
  if (text.endsWith("\n")) text = text.slice(0, -1);
  if (insertLine === 0) {
    const lineBreak = breakOf(bytes, bytes.indexOf(LF, contentStart));
    return plan(file, contentStart, withBreaks(text, lineBreak) + lineBreak, 1);
  }
  if (insertLine <= scan.total) {
    const after = scan.first[insertLine - 1];
    const lineBreak = breakOf(bytes, after);
    return plan(file, after + 1, withBreaks(text, lineBreak) + lineBreak, insertLine + 1);
  }
  // After a last line without a line break: that line gets the previous line's break, and the
  // new last line gets none, as before.
  const lineBreak = breakOf(bytes, scan.last);
  return plan(file, bytes.length, lineBreak + withBreaks(text, lineBreak), insertLine);
}

function plan(file: TextFile, offset: number, text: string, line: number): InsertPlan {
  return {
    splice: { start: offset, end: offset, insert: encodeFor(file, text, "`new_str`") },
    line,
  };
}

function withBreaks(text: string, lineBreak: LineBreak): string {
  return lineBreak === "\n" ? text : text.replaceAll("\n", lineBreak);
}

// The line break whose `\n` is at `at` (-1: none, so the default `\n`).
function breakOf(bytes: Uint8Array, at: number): LineBreak {
  return at > 0 && bytes[at - 1] === CR ? "\r\n" : "\n";
}

interface BreakScan {
  /** Offsets of the first `wanted` `\n`s. */
  first: number[];
  /** How many `\n`s the content has. */
  total: number;
  /** Offset of the last `\n`, or -1. */
  last: number;
}

function scanBreaks(bytes: Uint8Array, from: number, wanted: number): BreakScan {
  const first: number[] = [];
  let total = 0;
  let last = -1;
  for (let at = bytes.indexOf(LF, from); at !== -1; at = bytes.indexOf(LF, at + 1)) {
    if (total < wanted) first.push(at);
    total++;
    last = at;
  }
  return { first, total, last };
}
