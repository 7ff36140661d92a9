/** `str_replace`: find `old_str` exactly once and turn it into a byte splice. */
import { FileToolError } from "../fs/errors.ts";
import {
  breakForRegion,
  foldInput,
  foldLineBreaks,
  lineNumberAt,
  unfoldOffset,
} from "./line_breaks.ts";
import { describeNearMisses } from "./near_miss.ts";
import type { Splice } from "./splice.ts";
import { decodeText, encodeFor, type TextFile } from "./text_file.ts";

// Occurrence line numbers listed at most in a "Multiple occurrences" error.
const MAX_LISTED_OCCURRENCES = 50;
// Characters of old_str echoed in messages at most.
const MAX_ECHO_CHARS = 1000;

/** A planned replacement: the splice and the 1-based line where it starts. */
export interface ReplacePlan {
  splice: Splice;
  line: number;
}

/**
 * Plans replacing the single occurrence of `oldStr` in `file` with `newStr`. Line breaks in both
 * stand for whatever break the file has at that place; the inserted text gets the break the
 * replaced region used. Throws `FileToolError` for no match (with the closest lines) or several.
 */
export function planReplace(file: TextFile, oldStr: string, newStr: string): ReplacePlan {
  const old = foldInput(oldStr);
  const replacement = foldInput(newStr);
  const decoded = decodeText(file);
  const folded = foldLineBreaks(decoded.text);
  const first = folded.text.indexOf(old);
  if (first === -1) {
    throw new FileToolError(
      `No replacement was performed, old_str \`${echo(oldStr)}\` did not appear verbatim in ` +
        `${file.shown}.${describeNearMisses(folded.text, old)}`,
    );
  }
  if (folded.text.indexOf(old, first + 1) !== -1) {
    throw new FileToolError(
      `No replacement was performed. Multiple occurrences of old_str \`${echo(oldStr)}\` in ` +
        `lines ${occurrenceLines(folded.text, old, first)}. Please ensure it is unique: include ` +
        `enough surrounding lines in old_str that it matches exactly one place.`,
    );
  }
  const end = first + old.length;
  const lineBreak = breakForRegion(folded, first, end);
  const text = lineBreak === "\n" ? replacement : replacement.replaceAll("\n", lineBreak);
  return {
    splice: {
      start: decoded.byteOffset(unfoldOffset(folded, first)),
      end: decoded.byteOffset(unfoldOffset(folded, end)),
      insert: encodeFor(file, text, "`new_str`"),
    },
    line: lineNumberAt(folded.text, first),
  };
}

// `[3, 7]`: the distinct start lines of every (possibly overlapping) occurrence.
function occurrenceLines(text: string, old: string, first: number): string {
  const lines: number[] = [];
  let count = 0;
  let line = 1;
  let scanned = 0;
  for (let at = first; at !== -1; at = text.indexOf(old, at + 1)) {
    count++;
    for (
      let nl = text.indexOf("\n", scanned);
      nl !== -1 && nl < at;
      nl = text.indexOf("\n", nl + 1)
    ) {
      line++;
      scanned = nl + 1;
    }
    if (lines[lines.length - 1] !== line) lines.push(line);
  }
  const listed = lines.slice(0, MAX_LISTED_OCCURRENCES).join(", ");
  const more = lines.length > MAX_LISTED_OCCURRENCES ? ", ..." : "";
  const total = count > lines.length ? ` (${count} occurrences)` : "";
  return `[${listed}${more}]${total}`;
}

function echo(text: string): string {
  return text.length > MAX_ECHO_CHARS ? `${text.slice(0, MAX_ECHO_CHARS)}…` : text;
}
