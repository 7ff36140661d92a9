/**
 * What a source file's bytes are worth: its content hash, whether parsing it could yield
 * definitions (binary, minified and oversized files cannot, or not at a price worth paying), and
 * its text. The same decoding serves indexing and, later, reading bodies back, so offsets agree.
 */
/** Files larger than this are not parsed. */
export const MAX_SOURCE_BYTES = 16 * 1024 * 1024;
/** Files at least this large whose lines average more than `MINIFIED_LINE` are minified. */
const MINIFIED_MIN_BYTES = 16 * 1024;
const MINIFIED_LINE = 300;
/** A NUL byte this early means a binary file, whatever its name. */
const BINARY_PROBE = 8000;

const decoder = new TextDecoder("utf-8");

/** The text tree-sitter parses: UTF-8 with invalid bytes replaced, BOM dropped. */
export function decodeSource(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/**
 * A hex digest (SHA-1, Web Crypto) of the file's bytes; equal digests mean nothing to re-parse.
 * Web Crypto rather than node:crypto: loading Node's crypto module costs a one-shot search ~30 ms.
 */
export async function contentHash(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-1", bytes as Uint8Array<ArrayBuffer>),
  );
  let hex = "";
  for (const b of digest) hex += (b < 16 ? "0" : "") + b.toString(16);
  return hex;
}

/**
 * Why `bytes` cannot yield definitions worth parsing, or undefined when they can. `size` (default:
 * the length of `bytes`) lets a caller judge a file too large to read by its stat alone.
 */
export function skipReason(bytes: Uint8Array, size = bytes.length): string | undefined {
  if (size > MAX_SOURCE_BYTES) {
    return `larger than ${MAX_SOURCE_BYTES / (1024 * 1024)} MB`;
  }
  const probe = bytes.subarray(0, BINARY_PROBE);
  if (probe.indexOf(0) >= 0) return "binary";
  if (bytes.length >= MINIFIED_MIN_BYTES) {
    let lines = 1;
    for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) lines++;
    const average = bytes.length / lines;
    if (average > MINIFIED_LINE) {
      return `minified or generated (lines average ${Math.round(average)} characters)`;
    }
  }
  return undefined;
}
