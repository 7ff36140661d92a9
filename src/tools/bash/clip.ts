/**
 * Shows an over-long output as its head and tail, joined by a marker that says exactly what was
 * left out and where the full text is, so the model can read the rest by range.
 */

/** What `clipOutput` needs to know about a text longer than the limit. */
export interface ClipInput {
  /** The stream's name in the marker (`stdout` or `stderr`). */
  label: string;
  /** The first `limit` characters (or more). */
  head: string;
  /** The last `limit` characters (or more). */
  tail: string;
  /** Length of the whole text, in UTF-16 code units as JavaScript counts them. */
  totalChars: number;
  /** Line feeds in the whole text. */
  totalNewlines: number;
  /** The file holding the full text. */
  savedPath: string;
  /** False when the file holds only a prefix because the output was too large to keep. */
  savedComplete: boolean;
  /** Bytes the file holds, for the message when it is incomplete. */
  savedBytes: number;
}

/** Head + marker + tail, showing about `limit` characters of the text (`totalChars > limit`). */
export function clipOutput(input: ClipInput, limit: number): string {
  const headRoom = Math.floor(limit / 2);
  const tailRoom = limit - headRoom;

  let head = input.head.slice(0, headRoom);
  const lastBreak = head.lastIndexOf("\n");
  if (lastBreak >= headRoom / 2) head = head.slice(0, lastBreak + 1);
  else if (isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);

  const tailSource = input.tail;
  let tail = tailSource.slice(tailSource.length - tailRoom);
  const firstBreak = tail.indexOf("\n");
  if (firstBreak >= 0 && firstBreak < tailRoom / 2) tail = tail.slice(firstBreak + 1);
  else if (isLowSurrogate(tail.charCodeAt(0))) tail = tail.slice(1);
  const beforeTail = tailSource.charAt(tailSource.length - tail.length - 1);

  const omittedChars = input.totalChars - head.length - tail.length;
  const headNewlines = countNewlines(head);
  const omittedNewlines = input.totalNewlines - headNewlines - countNewlines(tail);
  const firstLine = headNewlines + 1;
  const lastLine = headNewlines + omittedNewlines + (beforeTail === "\n" ? 0 : 1);
  const endsWithNewline = tailSource.endsWith("\n");
  const totalLines = input.totalNewlines + (endsWithNewline ? 0 : 1);

  const where = firstLine >= lastLine
    ? `part of line ${firstLine}`
    : `lines ${firstLine}-${lastLine} of ${totalLines}`;
  const path = shellQuote(input.savedPath);
  const file = input.savedComplete
    ? `The full ${input.label} (${input.totalChars} characters, ${totalLines} lines) is saved in ` +
      `${input.savedPath}`
    : `The first ${input.savedBytes} bytes of the ${input.label} (${input.totalChars} characters ` +
      `in all, too large to keep whole) are saved in ${input.savedPath}`;
  const marker = `[... ${omittedChars} characters omitted (${where}). ${file}; read a range ` +
    `with e.g. \`sed -n '${firstLine},${Math.min(lastLine, firstLine + 99)}p' ${path}\` ...]`;
  const before = head === "" || head.endsWith("\n") ? "" : "\n";
  return `${head}${before}${marker}\n${tail}`;
}

/** The number of line feeds in `text`. */
export function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Quotes a path for a shell command line, leaving plain paths as they are. */
function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
