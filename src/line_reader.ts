/**
 * Splits a byte stream into lines in time linear in its size. Each chunk is searched for a
 * newline once, from where the last search stopped; the pieces of a line are joined and decoded
 * once, when its newline arrives. A line longer than the limit is not kept: its bytes are counted
 * and dropped until its newline, and the caller gets a `tooLong` event to answer instead.
 */

/** Longest line accepted by default: 256 MiB, far above any real tool call. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

/** A whole line (without `\n` or `\r\n`), or the size of a line that was over the limit. */
export type LineEvent = { line: string } | { tooLong: number };

/**
 * A source read straight into a buffer, like `Deno.stdin`. Reading stdin this way skips the
 * stream layer `Deno.stdin.readable` adds to every read, which a server answering small requests
 * one at a time pays on each (about a tenth of a millisecond on a loaded machine).
 */
export interface ByteReader {
  read(buffer: Uint8Array): Promise<number | null>;
}

const NEWLINE = 0x0a;
// What one read of a `ByteReader` asks for: a pipe's default capacity.
const READ_BYTES = 64 * 1024;

/**
 * Yields the lines of `input`; the last one may lack a newline. Invalid UTF-8 becomes U+FFFD.
 * @example
 * for await (const event of readLines(Deno.stdin.readable)) {
 *   if ("line" in event) console.log(event.line);
 * }
 */
export async function* readLines(
  input: ReadableStream<Uint8Array> | ByteReader,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): AsyncGenerator<LineEvent> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  let dropping = false;
  const finish = (last: Uint8Array): LineEvent => {
    const total = size + last.length;
    const event: LineEvent = dropping || total > maxLineBytes
      ? { tooLong: total }
      : { line: decode(decoder, parts, last, total) };
    parts = [];
    size = 0;
    dropping = false;
    return event;
  };
  for await (const chunk of "read" in input ? chunksOf(input) : input) {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        const rest = chunk.subarray(start);
        if (rest.length > 0) {
          if (!dropping && size + rest.length > maxLineBytes) {
            dropping = true;
            parts = [];
          }
          // Copied: a reader may hand out views of a buffer it reuses.
          if (!dropping) parts.push(rest.slice());
          size += rest.length;
        }
        break;
      }
      yield finish(chunk.subarray(start, newline));
      start = newline + 1;
    }
  }
  if (size > 0 || dropping) yield finish(new Uint8Array(0));
}

/**
 * The chunks of `reader`, each a view of one buffer that the next read overwrites: `readLines`
 * is done with a chunk (it copies what it keeps) before it asks for the next.
 */
async function* chunksOf(reader: ByteReader): AsyncGenerator<Uint8Array> {
  const buffer = new Uint8Array(READ_BYTES);
  while (true) {
    const n = await reader.read(buffer);
    if (n === null) return;
    if (n > 0) yield buffer.subarray(0, n);
  }
}

function decode(decoder: TextDecoder, parts: Uint8Array[], last: Uint8Array, total: number) {
  let bytes = last;
  if (parts.length > 0) {
    bytes = new Uint8Array(total);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.length;
    }
    bytes.set(last, at);
  }
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : undefined;
  return decoder.decode(end === undefined ? bytes : bytes.subarray(0, end));
}

/** Parses `--max-line-bytes`; throws an Error saying what is wrong. */
export function parseMaxLineBytes(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_LINE_BYTES;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1024) {
    throw new Error(
      `--max-line-bytes must be a whole number of bytes, at least 1024 (got '${text}')`,
    );
  }
  return value;
}
