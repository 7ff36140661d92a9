/** An edit as bytes: replace `[start, end)` of the file with `insert`. Nothing else changes. */

/** One contiguous change to a file's bytes. */
export interface Splice {
  start: number;
  end: number;
  insert: Uint8Array;
}

/**
 * The new file as parts to write: the untouched prefix, the inserted bytes, the untouched suffix.
 * The prefix and suffix are views of `bytes`, so they are the original bytes by construction.
 */
export function splicedParts(bytes: Uint8Array, splice: Splice): Uint8Array[] {
  return [bytes.subarray(0, splice.start), splice.insert, bytes.subarray(splice.end)];
}

/** True when `bytes` holds exactly `expected` at `offset`. */
export function bytesAt(bytes: Uint8Array, offset: number, expected: Uint8Array): boolean {
  if (offset < 0 || offset + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) {
    if (bytes[offset + i] !== expected[i]) return false;
  }
  return true;
}
