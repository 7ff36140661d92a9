/**
 * Text encodings the editor round-trips byte for byte: UTF-8 (with or without a BOM), UTF-16
 * (LE/BE, with or without a BOM) and the legacy encodings npm:iconv-lite knows (GBK/GB18030, Big5,
 * Shift_JIS, EUC-JP, EUC-KR, Windows-125x, KOI8-R, ISO-8859-x, ...). A legacy file's encoding is
 * guessed from its whole content by npm:jschardet, and only a guess that decodes the file to text
 * and back to the very same bytes is taken. A file is only written back in the encoding it was
 * read in; text the encoding cannot hold is refused, never written as `?`.
 */
import { isUtf8 } from "node:buffer";
import { hasZeroByte } from "./binary.ts";
import { loadCodecs } from "./codecs.ts";
import { guessLegacy } from "./legacy_guess.ts";
import {
  decode,
  DecodeError,
  type Encoding,
  type EncodingName,
  firstInvalidUtf8,
  roundTripMismatch,
  utf8SequenceLength,
} from "./transcode.ts";

export {
  decode,
  DecodeError,
  encode,
  encodedLength,
  type Encoding,
  type EncodingName,
  isUtf16,
  roundTripMismatch,
  UnencodableError,
} from "./transcode.ts";

// Encodings whose text a caller may not state: the editor could not splice them byte for byte.
const STATEFUL = new Set(["utf-7", "utf7", "utf-7-imap", "utf7imap"]);

/**
 * Works out how to read `bytes`. A UTF-16 or UTF-8 byte-order mark decides; valid UTF-8 is UTF-8;
 * UTF-16 without a BOM is recognised by its NUL bytes; anything else is guessed from the whole
 * content among the legacy encodings, and only guesses that give back the same bytes count. A
 * guess that is not sure carries `uncertain`. Throws `DecodeError` when nothing fits. `layout`
 * is `utf16Layout(bytes)` when the caller has worked it out already.
 *
 * @example
 * ```ts
 * await detectEncoding(Uint8Array.of(0x63, 0x61, 0x66, 0xe9)); // { name: "windows-1252", bomLength: 0 }
 * ```
 */
export async function detectEncoding(
  bytes: Uint8Array,
  layout?: Encoding | null,
): Promise<Encoding> {
  const utf16 = layout === undefined ? utf16Layout(bytes) : layout;
  if (utf16 && (utf16.bomLength > 0 || await isUtf16Text(bytes, utf16))) {
    return await checkedUtf16(bytes, utf16);
  }
  const bomLength = startsWith(bytes, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  if (isUtf8(bytes)) return { name: "utf-8", bomLength };
  const firstBad = firstInvalidUtf8(bytes);
  if (bomLength > 0) {
    throw new DecodeError(
      `it starts with a UTF-8 byte-order mark but is not valid UTF-8 (first invalid byte at ` +
        `${describeOffset(bytes, firstBad)})`,
    );
  }
  const stats = highByteStats(bytes);
  if (stats.utf8Sequences > 0 && stats.utf8Sequences >= stats.strayBytes) {
    throw new DecodeError(
      `it is mostly UTF-8 but contains invalid UTF-8 bytes (the first at ` +
        `${describeOffset(bytes, firstBad)}), so it would not survive an edit unchanged`,
    );
  }
  return guessLegacy(bytes, await loadCodecs());
}

/**
 * How to read `bytes` in the encoding the caller stated (`encoding` parameter). The name must be
 * one iconv-lite knows, and the bytes must decode in it and encode back to themselves; a BOM of
 * that encoding is kept apart. Throws `DecodeError` otherwise.
 */
export async function statedEncoding(bytes: Uint8Array, stated: string): Promise<Encoding> {
  const name = await checkName(stated);
  let bomLength = 0;
  let resolved = name;
  if ((name === "utf-8" || name === "utf8") && startsWith(bytes, [0xef, 0xbb, 0xbf])) {
    bomLength = 3;
  } else if (name.startsWith("utf-16") || name.startsWith("utf16") || name === "ucs2") {
    const le = startsWith(bytes, [0xff, 0xfe]);
    const be = startsWith(bytes, [0xfe, 0xff]);
    if (le || be) bomLength = 2;
    if (name === "utf-16" || name === "utf16") resolved = be ? "utf-16be" : "utf-16le";
  }
  if (resolved === "utf8") resolved = "utf-8";
  const encoding = { name: resolved, bomLength };
  const mismatch = roundTripMismatch(bytes.subarray(bomLength), resolved);
  if (mismatch >= 0) {
    throw new DecodeError(
      `it is not ${stated} text: its bytes do not decode in ${stated} and back unchanged (the ` +
        `first problem at ${describeOffset(bytes, bomLength + mismatch)})`,
    );
  }
  return encoding;
}

/** Checks that `encoding` is a name the editor can write in; returns it lower-cased. */
export async function checkName(encoding: string): Promise<EncodingName> {
  const name = encoding.trim().toLowerCase();
  if (name === "utf-8" || name === "utf8") return "utf-8";
  const codecs = await loadCodecs();
  if (!codecs.encodingExists(name) || STATEFUL.has(name)) {
    throw new DecodeError(
      `\`encoding\` ${JSON.stringify(encoding)} is not an encoding the editor can use; give a ` +
        `name such as "utf-8", "gbk", "gb18030", "big5", "shift_jis", "euc-jp", "euc-kr", ` +
        `"windows-1251", "koi8-r", "iso-8859-2" or "utf-16le"`,
    );
  }
  return name;
}

/**
 * The UTF-16 layout `bytes` look like (BOM, or the NUL pattern of mostly-ASCII text), or null.
 * `zeroFree`: the caller has already found that `bytes` hold no zero byte (`hasZeroByte`).
 */
export function utf16Layout(bytes: Uint8Array, zeroFree = false): Encoding | null {
  if (startsWith(bytes, [0xff, 0xfe])) return { name: "utf-16le", bomLength: 2 };
  if (startsWith(bytes, [0xfe, 0xff])) return { name: "utf-16be", bomLength: 2 };
  if (bytes.length < 4 || bytes.length % 2 !== 0) return null;
  // No zero byte at all (nearly every file that is not UTF-16): no NUL pattern to count, and
  // `hasZeroByte` finds that out far faster than the loop below.
  if (zeroFree || !hasZeroByte(bytes)) return null;
  const units = bytes.length / 2;
  let zeroEven = 0;
  let zeroOdd = 0;
  for (let i = 0; i < bytes.length; i += 2) {
    if (bytes[i] === 0 && bytes[i + 1] === 0) return null; // a NUL character: binary
    if (bytes[i] === 0) zeroEven++;
    if (bytes[i + 1] === 0) zeroOdd++;
  }
  // Text in UTF-16 has a zero byte in most units of its ASCII part, always on the same side.
  if (zeroOdd >= units * 0.3 && zeroEven <= units * 0.02) return { name: "utf-16le", bomLength: 0 };
  if (zeroEven >= units * 0.3 && zeroOdd <= units * 0.02) return { name: "utf-16be", bomLength: 0 };
  return null;
}

/** True when `bytes` decode as UTF-16 text in `layout` (from `utf16Layout`). */
export async function isUtf16Text(bytes: Uint8Array, layout: Encoding): Promise<boolean> {
  try {
    await checkedUtf16(bytes, layout);
    return true;
  } catch (e) {
    if (e instanceof DecodeError) return false;
    throw e;
  }
}

async function checkedUtf16(bytes: Uint8Array, layout: Encoding): Promise<Encoding> {
  const content = bytes.subarray(layout.bomLength);
  if (content.length % 2 !== 0) {
    throw new DecodeError(
      `it starts with a ${layout.name.toUpperCase()} byte-order mark but has an odd number of ` +
        `bytes, so it is not whole UTF-16 text`,
    );
  }
  await loadCodecs();
  const text = decode(content, layout.name);
  // Binary data can have the NUL pattern too; its "text" is full of controls or broken pairs.
  let controls = 0;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 0x1b) || c === 0x7f) {
      controls++;
    }
  }
  if (
    text.includes("\0") || !text.isWellFormed() || controls > text.length * 0.1 ||
    roundTripMismatch(content, layout.name) >= 0
  ) {
    throw new DecodeError(`it looks like ${layout.name.toUpperCase()} but does not decode exactly`);
  }
  return layout;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

interface HighByteStats {
  /** Well-formed multi-byte UTF-8 sequences. */
  utf8Sequences: number;
  /** High bytes that are not part of a well-formed UTF-8 sequence. */
  strayBytes: number;
}

function highByteStats(bytes: Uint8Array): HighByteStats {
  const stats: HighByteStats = { utf8Sequences: 0, strayBytes: 0 };
  for (let i = 0; i < bytes.length;) {
    if (bytes[i] < 0x80) {
      i++;
      continue;
    }
    const length = utf8SequenceLength(bytes, i);
    if (length > 0) {
      stats.utf8Sequences++;
      i += length;
    } else {
      stats.strayBytes++;
      i++;
    }
  }
  return stats;
}

// "line L, byte offset N", for error messages.
function describeOffset(bytes: Uint8Array, offset: number): string {
  let line = 1;
  for (let i = bytes.indexOf(10); i !== -1 && i < offset; i = bytes.indexOf(10, i + 1)) line++;
  return `line ${line}, byte offset ${offset}`;
}
