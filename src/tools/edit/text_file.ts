/**
 * A text file loaded for editing: its exact bytes, how they decode, and the checks that keep the
 * editor away from files it cannot round-trip (binary, undecodable, too large, not regular).
 */
import { Buffer, isAscii } from "node:buffer";
import { isMissing, type ReadRefusals } from "../fs/confined.ts";
import { FileToolError } from "../fs/errors.ts";
import { formatSize } from "../fs/size.ts";
import { binaryReason, hasZeroByte } from "./binary.ts";
import {
  decode,
  DecodeError,
  detectEncoding,
  encode,
  encodedLength,
  type Encoding,
  isUtf16,
  isUtf16Text,
  statedEncoding,
  UnencodableError,
  utf16Layout,
} from "./encoding.ts";
import type { FileStore } from "./store.ts";

/** A file's bytes and encoding. Edits splice `bytes`; nothing is re-encoded but the new text. */
export interface TextFile {
  /** The real path. */
  real: string;
  /** The path as the model wrote it, for messages. */
  shown: string;
  bytes: Uint8Array;
  encoding: Encoding;
  info: Deno.FileInfo;
}

/** The decoded content of a file, with the map from character offsets back to bytes. */
export interface DecodedText {
  /** The content without the BOM. */
  text: string;
  /** The byte offset in the file of character offset `index` of `text`. */
  byteOffset(index: number): number;
}

/**
 * Reads `real` from `store` for an edit. Throws `FileToolError` with a message for the model when
 * the path is missing, not a regular file, larger than `maxBytes`, binary, not decodable exactly,
 * or in an encoding that detection is unsure of (unless the caller `stated` the encoding, or
 * `uncertain` is "keep": the caller then checks the edit under every reading, see `readings.ts`).
 */
export async function loadTextFile(
  store: FileStore,
  real: string,
  shown: string,
  maxBytes: number,
  stated?: string,
  uncertain: "refuse" | "keep" = "refuse",
): Promise<TextFile> {
  const info = await statEditable(store, real, shown);
  if (info.size > maxBytes) {
    throw new FileToolError(
      EDIT_REFUSALS.tooLarge(shown, formatSize(info.size), formatSize(maxBytes)),
    );
  }
  const read = await store.read(real, shown);
  const encoding = await encodingOf(read.bytes, shown, "edited", stated);
  if (encoding.uncertain && uncertain === "refuse") throw uncertainError(shown, encoding);
  return { real, shown, bytes: read.bytes, encoding, info: read.info };
}

/** The editor's refusals to edit a path, with Trae's messages for a missing one and a directory. */
export const EDIT_REFUSALS: ReadRefusals = {
  missing: (shown) => missingPathError(shown).message,
  notRegular: (shown, info) =>
    info.isDirectory
      ? `The path ${shown} is a directory and only the \`view\` command can be used on directories`
      : notRegularError(shown).message,
  tooLarge: (shown, size, limit) =>
    `The file ${shown} is ${size}, larger than the ${limit} the editor edits. Edit it with bash ` +
    `instead (e.g. \`sed -i\` on a line found with \`grep -n\`), or raise the editor's ` +
    `maxFileBytes setting. \`view\` with \`view_range\` still shows parts of it.`,
};

/**
 * What is at `real` in `store`, insisting on a regular file: the editor's refusals (missing, a
 * directory, a device, socket or pipe) as `FileToolError`s otherwise.
 */
export async function statEditable(
  store: FileStore,
  real: string,
  shown: string,
): Promise<Deno.FileInfo> {
  let info: Deno.FileInfo;
  try {
    info = await store.stat(real, shown);
  } catch (e) {
    if (isMissing(e)) throw new FileToolError(EDIT_REFUSALS.missing(shown));
    throw e;
  }
  if (!info.isFile) throw new FileToolError(EDIT_REFUSALS.notRegular(shown, info));
  return info;
}

/** The message for a device, socket or pipe: reading one could block forever. */
export function notRegularError(shown: string): FileToolError {
  return new FileToolError(
    `The path ${shown} is not a regular file (a device, socket or pipe); the editor only works ` +
      `on regular files.`,
  );
}

/** Trae's message for a path that does not exist. */
export function missingPathError(shown: string): FileToolError {
  return new FileToolError(`The path ${shown} does not exist. Please provide a valid path.`);
}

/** The message for a binary file. */
export function binaryError(shown: string, reason: string): FileToolError {
  return new FileToolError(
    `The file ${shown} appears to be binary (${reason}); the editor only views and edits text ` +
      `files. Inspect it with bash instead (e.g. \`file ${shown}\` or \`xxd ${shown} | head\`).`,
  );
}

/**
 * The encoding of a whole file's `bytes`: the `stated` one (checked), else the detected one.
 * Binary files and undecodable ones become `FileToolError`s saying what can be done instead
 * (`action` is "edited" or "shown").
 */
export async function encodingOf(
  bytes: Uint8Array,
  shown: string,
  action: string,
  stated?: string,
): Promise<Encoding> {
  try {
    if (stated !== undefined) return await statedEncoding(bytes, stated);
    // UTF-16 text is full of NUL bytes, so it is recognised before the binary check.
    // One scan for zero bytes serves both the UTF-16 and the binary check.
    const zeroFree = !hasZeroByte(bytes);
    const layout = utf16Layout(bytes, zeroFree);
    if (!layout || layout.bomLength === 0) {
      const binary = binaryReason(bytes, false, zeroFree);
      if (binary && !(layout && await isUtf16Text(bytes, layout))) {
        throw binaryError(shown, binary);
      }
    }
    return await detectEncoding(bytes, layout);
  } catch (e) {
    if (e instanceof DecodeError) {
      throw new FileToolError(
        `The file ${shown} cannot be ${action}: ${e.message}. It was not changed; if you know ` +
          `its encoding, give it as \`encoding\` (e.g. "gbk", "shift_jis", "windows-1251"), or ` +
          `use bash to inspect or convert it (e.g. \`file ${shown}\`, \`iconv\`).`,
      );
    }
    throw e;
  }
}

/** The refusal to edit a file whose encoding is only a guess; `why` says what is at stake. */
export function uncertainError(
  shown: string,
  encoding: Encoding,
  why = "editing it in the wrong one would damage it",
): FileToolError {
  return new FileToolError(
    `No change was made: the encoding of ${shown} is uncertain (${
      describeUncertain(encoding)
    }), and ${why}. View it to check which reading is right, then repeat the edit with ` +
      `\`encoding\` set (e.g. "${encoding.name}").`,
  );
}

/** "it reads as gbk, but it may also be big5 or euc-kr". */
export function describeUncertain(encoding: Encoding): string {
  const others = encoding.uncertain?.alternatives ?? [];
  return others.length === 0
    ? `it was read as ${encoding.name}, but the text is too short or unusual to be sure`
    : `it was read as ${encoding.name}, but it may also be ${
      others.slice(0, -1).join(", ") + (others.length > 1 ? " or " : "") + others.at(-1)
    }`;
}

/** Decodes the content of `file` (BOM excluded). */
export function decodeText(file: TextFile): DecodedText {
  const { bomLength, name } = file.encoding;
  const content = file.bytes.subarray(bomLength);
  const text = decode(content, name);
  // Single-byte encodings and pure ASCII map characters to bytes one to one.
  if (name === "windows-1252" || (!isUtf16(name) && isAscii(content))) {
    return { text, byteOffset: (index) => bomLength + index };
  }
  if (name === "utf-8") {
    return {
      text,
      byteOffset: (index) => bomLength + Buffer.byteLength(text.slice(0, index), "utf8"),
    };
  }
  if (isUtf16(name)) return { text, byteOffset: (index) => bomLength + 2 * index };
  // Other legacy encodings: the encoded length of the text before the offset (the file's bytes
  // round-trip exactly, so this is where that character starts).
  return { text, byteOffset: (index) => bomLength + encodedLength(text.slice(0, index), name) };
}

/**
 * Encodes text to go into `file`. A character the file's encoding lacks is a `FileToolError`
 * naming `what` (e.g. "`new_str`"), never a silent substitute.
 */
export function encodeFor(file: TextFile, text: string, what: string): Uint8Array {
  try {
    return encode(text, file.encoding.name);
  } catch (e) {
    if (e instanceof UnencodableError) {
      throw new FileToolError(
        `No change was made: ${what} contains ${e.character}, which ${file.shown} cannot hold ` +
          `(it is encoded in ${e.encoding}). Use characters the encoding has, or an escape ` +
          `sequence the file's language understands.`,
      );
    }
    throw e;
  }
}
