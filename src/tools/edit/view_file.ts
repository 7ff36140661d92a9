/**
 * `view` of a file: `cat -n` lines, optionally a `view_range`. The file is streamed, so a range of
 * a file too large to edit can still be shown without holding it in memory, and only the shown
 * lines are decoded.
 */
import { FileToolError } from "../fs/errors.ts";
import { formatSize } from "../fs/size.ts";
import { BINARY_SAMPLE_BYTES, binaryReason, hasZeroByte } from "./binary.ts";
import {
  decode,
  DecodeError,
  detectEncoding,
  type Encoding,
  statedEncoding,
  utf16Layout,
} from "./encoding.ts";
import { MAX_RESPONSE_CHARS, numberLines, splitLines } from "./numbering.ts";
import { binaryError, describeUncertain, encodingOf } from "./text_file.ts";
import { isUtf8 } from "node:buffer";
import type { FileStore, OpenedFile } from "./store.ts";

// Bytes read per chunk.
const CHUNK_BYTES = 1 << 20;
// Bytes of the requested lines kept at most: enough for the character budget in any UTF-8.
const MAX_COLLECTED_BYTES = 4 * MAX_RESPONSE_CHARS;

const LF = 10;

/** What to view. `range` is the model's `view_range`, unchecked. */
export interface ViewFileRequest {
  store: FileStore;
  real: string;
  shown: string;
  info: Deno.FileInfo;
  range?: readonly number[];
  maxBytes: number;
  /** The encoding the caller stated, if any. */
  encoding?: string;
}

/** The `view` output for a file. Throws `FileToolError` for bad ranges and unviewable files. */
export async function viewFile(request: ViewFileRequest): Promise<string> {
  const { shown, info, maxBytes } = request;
  const range = request.range && request.range.length > 0 ? request.range : undefined;
  if (range === undefined && info.size > maxBytes) {
    throw new FileToolError(
      `The file ${shown} is ${formatSize(info.size)}, larger than the ${
        formatSize(maxBytes)
      } the editor shows whole. View part of it with \`view_range\` (e.g. [1, 100], or ` +
        `[start, -1] for the end), or search it with \`grep -n\` in bash to find line numbers.`,
    );
  }
  if (range !== undefined && range.length !== 2) {
    throw new FileToolError("Invalid `view_range`. It should be a list of two integers.");
  }
  const [from, to] = range ?? [1, -1];
  if (range !== undefined && to !== -1 && (to < from || to < 1)) {
    throw new FileToolError(
      `Invalid \`view_range\`: [${from}, ${to}]. Its second element \`${to}\` should be larger ` +
        `or equal than its first \`${from}\` (or -1 for the end of the file)`,
    );
  }
  // A file that fits is judged as a whole; a range of a UTF-8 file is still streamed, so that
  // only the shown lines are decoded.
  const fits = info.size <= maxBytes;
  if (fits && (range === undefined || request.encoding !== undefined)) {
    return await viewWhole(request, from, to, range !== undefined);
  }
  // A start before line 1 is an error whose message needs the line count: count, keep nothing.
  const scan = from < 1
    ? await scanLines(request, Infinity, Infinity)
    : await scanLines(request, from, to === -1 ? Infinity : to);
  if (scan.binary) throw binaryError(shown, scan.binary);
  if (fits && (scan.utf16 || !isUtf8(scan.collected))) {
    return await viewWhole(request, from, to, true);
  }
  if (scan.utf16) throw utf16TooLarge(shown);
  if (scan.complete && scan.lines === 0) {
    if (range === undefined) return `The file ${shown} is empty.`;
    throw new FileToolError(
      `Invalid \`view_range\`: [${from}, ${to}]. The file ${shown} is empty.`,
    );
  }
  // Both cases read the whole file (line `to` was never reached), so the count is exact.
  if (from < 1 || (scan.complete && from > scan.lines)) {
    throw new FileToolError(
      `Invalid \`view_range\`: [${from}, ${to}]. Its first element \`${from}\` should be within ` +
        `the range of lines of the file: [1, ${scan.lines}]`,
    );
  }
  const { text, encoding } = await decodeShown(scan, shown, request.encoding);
  const lines = splitLines(text);
  const numbered = numberLines(lines, from);
  const last = from + numbered.shown - 1;
  let out = `Here's the result of running \`cat -n\` on ${shown}:\n${numbered.text}\n`;
  if (numbered.clipped || scan.clipped) {
    const total = scan.complete ? ` of ${scan.lines}` : "";
    out += `<response clipped><NOTE>To save on context only part of this file has been shown ` +
      `to you (lines ${from}-${last}${total}). Narrow \`view_range\` to the lines you need, or ` +
      `search with \`grep -n\` in bash to find line numbers, then view that range.</NOTE>\n`;
  } else if (to !== -1 && scan.complete && to > scan.lines) {
    out += `<NOTE>The file has only ${scan.lines} lines; shown up to the last one.</NOTE>\n`;
  }
  return out + encodingNote(encoding);
}

// A file within the size limit is read whole: its encoding is judged from all of its content.
async function viewWhole(
  request: ViewFileRequest,
  from: number,
  to: number,
  ranged: boolean,
): Promise<string> {
  const { shown } = request;
  const { bytes } = await request.store.read(request.real, shown);
  const encoding = await encodingOf(bytes, shown, "shown", request.encoding);
  const all = splitLines(decode(bytes.subarray(encoding.bomLength), encoding.name));
  return viewOfLines(all, shown, from, to, ranged) + encodingNote(encoding);
}

/** The line a view of a file not in UTF-8 ends with: which encoding it was read as. */
export function encodingNote(encoding: Encoding): string {
  if (encoding.uncertain) {
    return `<NOTE>The encoding of this file is uncertain: ${describeUncertain(encoding)}. If ` +
      `the text above looks garbled, view it again with \`encoding\` set to the right one; ` +
      `edits whose bytes depend on the reading need \`encoding\` stated.</NOTE>\n`;
  }
  if (encoding.name === "utf-8") return "";
  return `<NOTE>This file is encoded in ${encoding.name}${
    encoding.bomLength > 0 ? " with a byte-order mark" : ""
  }, not UTF-8; it was decoded for display, and edits are written back in ${encoding.name}.` +
    `</NOTE>\n`;
}

// The result of one pass over a file.
interface LineScan {
  /** Lines seen; the file's line count when `complete`. */
  lines: number;
  /** True when the whole file was read. */
  complete: boolean;
  /** Bytes of the requested lines (breaks included), at most `MAX_COLLECTED_BYTES`. */
  collected: Uint8Array;
  /** True when the requested lines did not fit in `collected`. */
  clipped: boolean;
  binary: string | null;
  /** True when the file looks like UTF-16 (nothing else is filled in then). */
  utf16?: boolean;
}

// Reads the file once (on disk pinned against swapped directories): counts lines, keeps the
// bytes of lines `from..to`, and checks for binary content. Stops early once line `to` is
// complete (then `complete` is false).
async function scanLines(request: ViewFileRequest, from: number, to: number): Promise<LineScan> {
  const opened = await request.store.open(request.real, request.shown);
  let scan: LineScan;
  try {
    scan = await scanFile(opened.file, from, to);
  } finally {
    opened.file.close();
  }
  opened.confirm();
  return scan;
}

async function scanFile(file: OpenedFile["file"], from: number, to: number): Promise<LineScan> {
  const buffer = new Uint8Array(CHUNK_BYTES);
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let clipped = false;
  let line = 1;
  let first = true;
  let lastByte = -1;
  let contentSeen = false;
  let complete = true;
  while (true) {
    const read = await file.read(buffer);
    if (read === null) break;
    let chunk = buffer.subarray(0, read);
    if (first) {
      first = false;
      if (utf16Layout(chunk.subarray(0, BINARY_SAMPLE_BYTES & ~1))) {
        return { ...binaryScan(""), binary: null, utf16: true };
      }
      const reason = binaryReason(chunk.subarray(0, BINARY_SAMPLE_BYTES), true);
      if (reason) return binaryScan(reason);
      if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3);
    }
    if (hasZeroByte(chunk)) return binaryScan("it contains NUL bytes");
    if (chunk.length === 0) continue;
    contentSeen = true;
    lastByte = chunk[chunk.length - 1];
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(LF, at);
      const end = nl === -1 ? chunk.length : nl + 1;
      if (line >= from && line <= to && !clipped) {
        const room = MAX_COLLECTED_BYTES - keptBytes;
        const piece = chunk.slice(at, Math.min(end, at + room));
        kept.push(piece);
        keptBytes += piece.length;
        if (end - at > room) clipped = true;
      }
      if (nl === -1) break;
      line++;
      at = end;
      if (line > to) break;
    }
    if (line > to) {
      complete = false;
      break;
    }
  }
  const lines = complete && contentSeen && lastByte !== LF ? line : line - 1;
  return { lines, complete, collected: concat(kept, keptBytes), clipped, binary: null };
}

// Parts of a file too large to read whole are found by their line-break bytes, which UTF-16
// does not have.
function utf16TooLarge(shown: string): FileToolError {
  return new FileToolError(
    `The file ${shown} is UTF-16 text larger than the editor reads whole, so it cannot be ` +
      `viewed in parts. Convert it with bash (e.g. \`iconv -f UTF-16 -t UTF-8\`) to read it.`,
  );
}

function undecodable(shown: string, e: DecodeError): FileToolError {
  return new FileToolError(
    `The file ${shown} cannot be shown: ${e.message}. Inspect it with bash (e.g. ` +
      `\`file ${shown}\`).`,
  );
}

function binaryScan(reason: string): LineScan {
  return {
    lines: 0,
    complete: false,
    collected: new Uint8Array(),
    clipped: false,
    binary: reason,
  };
}

// Decodes the shown bytes; a cut in the middle of a UTF-8 character is backed off first.
async function decodeShown(
  scan: LineScan,
  shown: string,
  stated?: string,
): Promise<{ text: string; encoding: Encoding }> {
  let bytes = scan.collected;
  if (scan.clipped) {
    let end = bytes.length;
    while (end > 0 && (bytes[end - 1] & 0xc0) === 0x80) end--;
    if (end > 0 && bytes[end - 1] >= 0xc0) end--;
    bytes = bytes.subarray(0, end);
  }
  try {
    const encoding = stated === undefined
      ? await detectEncoding(bytes)
      : await statedEncoding(bytes, stated);
    return { text: decode(bytes, encoding.name), encoding };
  } catch (e) {
    if (e instanceof DecodeError) throw undecodable(shown, e);
    throw e;
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

// `view` of a whole text's lines: numbered like `cat -n`, the range checked with the messages
// models know, clipped past the output limit.
function viewOfLines(
  all: string[],
  shown: string,
  from: number,
  to: number,
  ranged: boolean,
): string {
  if (all.length === 0) {
    if (!ranged) return `The file ${shown} is empty.`;
    throw new FileToolError(
      `Invalid \`view_range\`: [${from}, ${to}]. The file ${shown} is empty.`,
    );
  }
  if (from < 1 || from > all.length) {
    throw new FileToolError(
      `Invalid \`view_range\`: [${from}, ${to}]. Its first element \`${from}\` should be within ` +
        `the range of lines of the file: [1, ${all.length}]`,
    );
  }
  const numbered = numberLines(all.slice(from - 1, to === -1 ? all.length : to), from);
  const last = from + numbered.shown - 1;
  let out = `Here's the result of running \`cat -n\` on ${shown}:\n${numbered.text}\n`;
  if (numbered.clipped) {
    out += `<response clipped><NOTE>To save on context only part of this file has been shown ` +
      `to you (lines ${from}-${last} of ${all.length}). Narrow \`view_range\` to the lines you ` +
      `need, or search with \`grep -n\` in bash to find line numbers, then view that ` +
      `range.</NOTE>\n`;
  } else if (to !== -1 && to > all.length) {
    out += `<NOTE>The file has only ${all.length} lines; shown up to the last one.</NOTE>\n`;
  }
  return out;
}
