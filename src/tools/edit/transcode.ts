/**
 * Text in a known encoding, byte for byte: decoding, encoding that refuses what the encoding
 * cannot hold, and the round-trip check every accepted encoding passes. Detection (which encoding
 * a file is in) builds on this in `encoding.ts` and `legacy_guess.ts`.
 */
import { isUtf8 } from "node:buffer";
import { type Codecs, codecsIfLoaded } from "./codecs.ts";

/** The name of an encoding as iconv-lite knows it, lower case (e.g. "utf-8", "gbk"). */
export type EncodingName = string;

/** How a file's bytes are to be read. */
export interface Encoding {
  name: EncodingName;
  /** Bytes of the byte-order mark at the start of the file (3 for UTF-8, 2 for UTF-16, else 0). */
  bomLength: number;
  /**
   * Set when detection was not sure: the other encodings the bytes may well be in. A file read
   * with an uncertain encoding is shown with a warning; an edit that would give different bytes
   * under these readings waits until the caller states the encoding (see `readings.ts`).
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

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 when there is none. */
export function utf8SequenceLength(bytes: Uint8Array, i: number): number {
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

/** Offset of the first byte of `bytes` that is not part of well-formed UTF-8, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
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
