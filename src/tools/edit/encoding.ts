/**
 * Text encodings the editor round-trips byte for byte: UTF-8 (with or without a BOM), UTF-16
 * (LE/BE, with or without a BOM) and the legacy encodings npm:iconv-lite knows (GBK/GB18030, Big5,
 * Shift_JIS, EUC-JP, EUC-KR, Windows-125x, KOI8-R, ISO-8859-x, ...). A legacy file's encoding is
 * guessed from its whole content by npm:jschardet, and only a guess that decodes the file to text
 * and back to the very same bytes is taken. A file is only written back in the encoding it was
 * read in; text the encoding cannot hold is refused, never written as `?`.
 */
import { isUtf8 } from "node:buffer";
import { type Codecs, codecsIfLoaded, loadCodecs } from "./codecs.ts";
import { guessLegacy } from "./legacy_guess.ts";

/** The name of an encoding as iconv-lite knows it, lower case (e.g. "utf-8", "gbk"). */
export type EncodingName = string;

/** How a file's bytes are to be read. */
export interface Encoding {
  name: EncodingName;
  /** Bytes of the byte-order mark at the start of the file (3 for UTF-8, 2 for UTF-16, else 0). */
  bomLength: number;
  /**
   * Set when detection was not sure: the other encodings the bytes may well be in. A file read
   * with an uncertain encoding is shown with a warning and edited only once the caller states it.
   */
  uncertain?: { alternatives: EncodingName[] };
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

// Encodings whose text a caller may not state: the editor could not splice them byte for byte.
const STATEFUL = new Set(["utf-7", "utf7", "utf-7-imap", "utf7imap"]);

/**
 * Works out how to read `bytes`. A UTF-16 or UTF-8 byte-order mark decides; valid UTF-8 is UTF-8;
 * UTF-16 without a BOM is recognised by its NUL bytes; anything else is guessed from the whole
 * content among the legacy encodings, and only guesses that give back the same bytes count. A
 * guess that is not sure carries `uncertain`. Throws `DecodeError` when nothing fits.
 *
 * @example
 * ```ts
 * await detectEncoding(Uint8Array.of(0x63, 0x61, 0x66, 0xe9)); // { name: "windows-1252", bomLength: 0 }
 * ```
 */
export async function detectEncoding(bytes: Uint8Array): Promise<Encoding> {
  const utf16 = utf16Layout(bytes);
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

/** Decodes `bytes` (without the BOM) in `encoding`. The bytes must have passed detection. */
export function decode(bytes: Uint8Array, encoding: EncodingName): string {
  if (encoding === "utf-8") return utf8Decoder.decode(bytes);
  if (encoding === "windows-1252") return cp1252Decoder.decode(bytes);
  const cached = lastDecoded;
  if (
    cached && cached.encoding === encoding && cached.buffer === bytes.buffer &&
    cached.offset === bytes.byteOffset && cached.length === bytes.length
  ) {
    return cached.text;
  }
  const text = codecs().decode(bytes, encoding);
  lastDecoded = {
    encoding,
    buffer: bytes.buffer,
    offset: bytes.byteOffset,
    length: bytes.length,
    text,
  };
  return text;
}

// The last legacy decoding: detection, display and editing of one file decode the same bytes.
let lastDecoded:
  | { encoding: string; buffer: ArrayBufferLike; offset: number; length: number; text: string }
  | undefined;

/** Encodes `text` in `encoding`; throws `UnencodableError` rather than write a substitute. */
export function encode(text: string, encoding: EncodingName): Uint8Array {
  if (encoding === "utf-8") {
    const lone = findLoneSurrogate(text);
    if (lone >= 0) throw new UnencodableError(text[lone], lone, encoding);
    return utf8Encoder.encode(text);
  }
  if (encoding === "windows-1252") return encodeCp1252(text);
  const lib = codecs();
  const bytes = lib.encode(text, encoding);
  if (lib.decode(bytes, encoding) === text) return bytes;
  // Find the first character that does not survive on its own, for the message.
  for (let i = 0; i < text.length;) {
    const char = String.fromCodePoint(text.codePointAt(i)!);
    if (lib.decode(lib.encode(char, encoding), encoding) !== char) {
      throw new UnencodableError(char, i, encoding);
    }
    i += char.length;
  }
  throw new UnencodableError(text, 0, encoding);
}

/** How many bytes `text` takes in `encoding` (a legacy one; no check that it fits). */
export function encodedLength(text: string, encoding: EncodingName): number {
  return codecs().encode(text, encoding).length;
}

/** True for the encodings whose code units are two bytes (line breaks are not single bytes). */
export function isUtf16(encoding: EncodingName): boolean {
  return encoding === "utf-16le" || encoding === "utf-16be";
}

function codecs(): Codecs {
  const lib = codecsIfLoaded();
  if (!lib) throw new Error("legacy codecs used before loadCodecs()");
  return lib;
}

function encodeCp1252(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80 || (code >= 0xa0 && code <= 0xff)) {
      out[i] = code;
      continue;
    }
    const byte = CP1252_HIGH.get(code);
    if (byte === undefined) {
      throw new UnencodableError(String.fromCodePoint(text.codePointAt(i)!), i, "windows-1252");
    }
    out[i] = byte;
  }
  return out;
}

/** Offset of the first byte that does not survive decoding and encoding in `encoding`, or -1. */
export function roundTripMismatch(bytes: Uint8Array, encoding: EncodingName): number {
  let back: Uint8Array;
  if (encoding === "utf-8") return isUtf8(bytes) ? -1 : Math.max(0, firstInvalidUtf8(bytes));
  if (encoding === "windows-1252") {
    const at = bytes.findIndex((b) => CP1252_UNDEFINED.has(b));
    return at;
  }
  const lib = codecs();
  try {
    back = lib.encode(decode(bytes, encoding), encoding);
  } catch {
    return 0;
  }
  const n = Math.min(back.length, bytes.length);
  for (let i = 0; i < n; i++) if (back[i] !== bytes[i]) return i;
  return back.length === bytes.length ? -1 : n;
}

/** The UTF-16 layout `bytes` look like (BOM, or the NUL pattern of mostly-ASCII text), or null. */
export function utf16Layout(bytes: Uint8Array): Encoding | null {
  if (startsWith(bytes, [0xff, 0xfe])) return { name: "utf-16le", bomLength: 2 };
  if (startsWith(bytes, [0xfe, 0xff])) return { name: "utf-16be", bomLength: 2 };
  if (bytes.length < 4 || bytes.length % 2 !== 0) return null;
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
