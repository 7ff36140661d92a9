/**
 * A text file loaded for editing: its exact bytes, how they decode, and the checks that keep the
 * editor away from files it cannot round-trip (binary, undecodable, too large, not regular).
 */
import { Buffer, isAscii } from "node:buffer";
import { FileToolError } from "../fs/errors.ts";
import { formatSize } from "../fs/size.ts";
import { binaryReason } from "./binary.ts";
import { readStable } from "../fs/stable.ts";
import {
  assertNotUtf16,
  decode,
  DecodeError,
  detectEncoding,
  encode,
  type Encoding,
  UnencodableError,
} from "./encoding.ts";

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
 * Reads `real` for an edit. Throws `FileToolError` with a message for the model when the path is
 * missing, not a regular file, larger than `maxBytes`, binary, or not decodable exactly.
 */
export async function loadTextFile(
  real: string,
  shown: string,
  maxBytes: number,
): Promise<TextFile> {
  const info = await statFile(real, shown);
  if (info.size > maxBytes) {
    throw new FileToolError(
      `The file ${shown} is ${formatSize(info.size)}, larger than the ${
        formatSize(maxBytes)
      } the editor edits. Edit it with bash instead (e.g. \`sed -i\` on a line found with ` +
        `\`grep -n\`), or raise the editor's maxFileBytes setting. \`view\` with \`view_range\` ` +
        `still shows parts of it.`,
    );
  }
  const bytes = await readStable(real);
  let encoding: Encoding;
  try {
    assertNotUtf16(bytes);
    const binary = binaryReason(bytes);
    if (binary) throw binaryError(shown, binary);
    encoding = detectEncoding(bytes);
  } catch (e) {
    if (e instanceof DecodeError) {
      throw new FileToolError(
        `The file ${shown} cannot be edited: ${e.message}. It was not changed; use bash to ` +
          `inspect or convert it (e.g. \`file ${shown}\`, \`iconv\`).`,
      );
    }
    throw e;
  }
  return { real, shown, bytes, encoding, info };
}

/**
 * Stats `real` (following links) and insists on a regular file, with Trae's messages for a
 * missing path and a directory.
 */
export async function statFile(real: string, shown: string): Promise<Deno.FileInfo> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(real);
  } catch (e) {
    if (isMissing(e)) throw missingPathError(shown);
    throw e;
  }
  if (info.isDirectory) {
    throw new FileToolError(
      `The path ${shown} is a directory and only the \`view\` command can be used on directories`,
    );
  }
  if (!info.isFile) throw notRegularError(shown);
  return info;
}

/** The message for a device, socket or pipe: reading one could block forever. */
export function notRegularError(shown: string): FileToolError {
  return new FileToolError(
    `The path ${shown} is not a regular file (a device, socket or pipe); the editor only works ` +
      `on regular files.`,
  );
}

/** True for the errors meaning "nothing there": not found, or a file where a directory was. */
export function isMissing(e: unknown): boolean {
  return e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory;
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

/** Decodes the content of `file` (BOM excluded). */
export function decodeText(file: TextFile): DecodedText {
  const { bomLength, name } = file.encoding;
  const content = file.bytes.subarray(bomLength);
  const text = decode(content, name);
  // Single-byte encodings and pure ASCII map characters to bytes one to one.
  if (name === "windows-1252" || isAscii(content)) {
    return { text, byteOffset: (index) => bomLength + index };
  }
  return {
    text,
    byteOffset: (index) => bomLength + Buffer.byteLength(text.slice(0, index), "utf8"),
  };
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
