/**
 * Text encodings the editor can round-trip byte for byte: UTF-8 (with or without a BOM) and the
 * legacy single-byte Windows-1252 (a superset of the printable Latin-1). A file is only written
 * back in the encoding it was read in; anything that cannot be decoded exactly is refused.
 */
import { isUtf8 } from "node:buffer";

/** The encodings a text file may be in. */
export type EncodingName = "utf-8" | "windows-1252";

/** How a file's bytes are to be read. */
export interface Encoding {
  name: EncodingName;
  /** Bytes of the byte-order mark at the start of the file (3 for a UTF-8 BOM, else 0). */
  bomLength: number;
}

/** A file's bytes cannot be decoded without loss; the message says why. */
export class DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DecodeError";
  }
}

/** A string holds a character the target encoding cannot represent. */
export class UnencodableError extends Error {
  /** The character for messages, e.g. `the character "終" (U+7D42)`. */
  readonly character: string;

  constructor(readonly char: string, readonly index: number, readonly encoding: EncodingName) {
    const code = char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    const character = `the character ${JSON.stringify(char)} (U+${code})`;
    super(`${character} cannot be written in ${encoding}`);
    this.name = "UnencodableError";
    this.character = character;
  }
}

// Bytes 0x80–0x9F that Windows-1252 leaves undefined: a file holding them is not cp1252 text.
const CP1252_UNDEFINED = new Set([0x81, 0x8d, 0x8f, 0x90, 0x9d]);

// Unicode code point → byte for the 0x80–0x9F block, derived from the platform's own decoder.
const CP1252_HIGH: ReadonlyMap<number, number> = (() => {
  const decoder = new TextDecoder("windows-1252");
  const table = new Map<number, number>();
  for (let byte = 0x80; byte <= 0x9f; byte++) {
    if (CP1252_UNDEFINED.has(byte)) continue;
    table.set(decoder.decode(Uint8Array.of(byte)).charCodeAt(0), byte);
  }
  return table;
})();

const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const cp1252Decoder = new TextDecoder("windows-1252");
const utf8Encoder = new TextEncoder();

/**
 * Works out how to read `bytes`. Valid UTF-8 (BOM or not) is UTF-8; otherwise single-byte
 * Windows-1252 is assumed, unless the bytes look like something else (broken UTF-8, UTF-16, a
 * multi-byte legacy encoding) or use bytes Windows-1252 does not define — then `DecodeError`.
 *
 * @example
 * ```ts
 * detectEncoding(Uint8Array.of(0x63, 0x61, 0x66, 0xe9)); // { name: "windows-1252", bomLength: 0 }
 * ```
 */
export function detectEncoding(bytes: Uint8Array): Encoding {
  assertNotUtf16(bytes);
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
  if (stats.undefinedAt >= 0) {
    throw new DecodeError(
      `it is neither UTF-8 nor Windows-1252/Latin-1 text (byte 0x${
        bytes[stats.undefinedAt].toString(16).toUpperCase()
      } at ${describeOffset(bytes, stats.undefinedAt)} is undefined in Windows-1252)`,
    );
  }
  if (stats.inLongRuns * 2 > stats.highBytes) {
    throw new DecodeError(
      "it is not UTF-8 and looks like a multi-byte legacy encoding (e.g. GBK, Big5, Shift_JIS, " +
        "EUC-KR); the editor handles UTF-8 and Windows-1252/Latin-1 text only",
    );
  }
  return { name: "windows-1252", bomLength: 0 };
}

/**
 * Throws `DecodeError` when `bytes` start with a UTF-16 byte-order mark. Checked before the binary
 * test, since UTF-16 text is full of NUL bytes but deserves a better message than "binary".
 */
export function assertNotUtf16(bytes: Uint8Array): void {
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff])) {
    throw new DecodeError(
      "it is encoded in UTF-16 (it starts with a UTF-16 byte-order mark); the editor handles " +
        "UTF-8 and Windows-1252/Latin-1 text only",
    );
  }
}

/** Decodes `bytes` (without the BOM) in `encoding`. The bytes must have passed `detectEncoding`. */
export function decode(bytes: Uint8Array, encoding: EncodingName): string {
  return encoding === "utf-8" ? utf8Decoder.decode(bytes) : cp1252Decoder.decode(bytes);
}

/** Encodes `text` in `encoding`; throws `UnencodableError` rather than write a substitute. */
export function encode(text: string, encoding: EncodingName): Uint8Array {
  if (encoding === "utf-8") {
    const lone = findLoneSurrogate(text);
    if (lone >= 0) throw new UnencodableError(text[lone], lone, encoding);
    return utf8Encoder.encode(text);
  }
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80 || (code >= 0xa0 && code <= 0xff)) {
      out[i] = code;
      continue;
    }
    const byte = CP1252_HIGH.get(code);
    if (byte === undefined) {
      throw new UnencodableError(String.fromCodePoint(text.codePointAt(i)!), i, encoding);
    }
    out[i] = byte;
  }
  return out;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

// Index of the first lone surrogate (TextEncoder would silently write U+FFFD for it), or -1.
function findLoneSurrogate(text: string): number {
  if (text.isWellFormed()) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

interface HighByteStats {
  highBytes: number;
  /** Well-formed multi-byte UTF-8 sequences. */
  utf8Sequences: number;
  /** High bytes that are not part of a well-formed UTF-8 sequence. */
  strayBytes: number;
  /** High bytes inside runs of three or more: typical of CJK encodings, rare in Latin text. */
  inLongRuns: number;
  /** Offset of the first byte undefined in Windows-1252, or -1. */
  undefinedAt: number;
}

function highByteStats(bytes: Uint8Array): HighByteStats {
  const stats: HighByteStats = {
    highBytes: 0,
    utf8Sequences: 0,
    strayBytes: 0,
    inLongRuns: 0,
    undefinedAt: -1,
  };
  let run = 0;
  for (let i = 0; i <= bytes.length; i++) {
    const b = i < bytes.length ? bytes[i] : 0;
    if (b < 0x80) {
      if (run >= 3) stats.inLongRuns += run;
      run = 0;
      continue;
    }
    run++;
    stats.highBytes++;
    if (stats.undefinedAt < 0 && CP1252_UNDEFINED.has(b)) stats.undefinedAt = i;
  }
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

// Length of the well-formed UTF-8 sequence starting at `i`, or 0 when there is none.
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i];
  let length: number;
  let min: number;
  if (lead >= 0xc2 && lead <= 0xdf) [length, min] = [2, 0x80];
  else if (lead >= 0xe0 && lead <= 0xef) [length, min] = [3, 0x800];
  else if (lead >= 0xf0 && lead <= 0xf4) [length, min] = [4, 0x10000];
  else return 0;
  if (i + length > bytes.length) return 0;
  let code = lead & (0xff >> (length + 1));
  for (let k = 1; k < length; k++) {
    const b = bytes[i + k];
    if ((b & 0xc0) !== 0x80) return 0;
    code = (code << 6) | (b & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    if (bytes[i] < 0x80) {
      i++;
      continue;
    }
    const length = utf8SequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return -1;
}

// "line L, byte offset N", for error messages.
function describeOffset(bytes: Uint8Array, offset: number): string {
  let line = 1;
  for (let i = bytes.indexOf(10); i !== -1 && i < offset; i = bytes.indexOf(10, i + 1)) line++;
  return `line ${line}, byte offset ${offset}`;
}
