/**
 * Finds the end-of-command marker in a byte stream. The shell prints `\n<tag>:<payload>:<tag>\n`
 * after each command, where the tag carries a random per-session nonce, so output can only end a
 * command early if it knows the nonce. The marker may be split across reads; bytes that could
 * begin a marker are held back until the next read decides.
 */
import { Buffer } from "node:buffer";

/** What one `push` found. */
export interface ScanResult {
  /** Command output before any marker; safe to hand on. Valid only until the next `push`. */
  output: Uint8Array;
  /** The marker's payload when a marker ended in this push, else null. */
  payload: string | null;
  /** Bytes after the marker (output that belongs to what comes next). Empty without a marker. */
  rest: Uint8Array;
}

const EMPTY = new Uint8Array(0);
// A marker payload is an exit status and a working directory; anything longer is not a marker.
const MAX_PAYLOAD = 64 * 1024;

/** Splits a stream at markers made from `tag`. */
export class MarkerScanner {
  readonly #start: Buffer;
  readonly #end: Buffer;
  #pending: Uint8Array = EMPTY;
  #inMarker = false;

  constructor(tag: string) {
    this.#start = Buffer.from(`\n${tag}:`);
    this.#end = Buffer.from(`:${tag}\n`);
  }

  /** Scans the next chunk. Feed `rest` back in when it is not empty. */
  push(chunk: Uint8Array): ScanResult {
    let data = this.#join(chunk);
    let output: Uint8Array = EMPTY;
    if (!this.#inMarker) {
      const start = data.indexOf(this.#start);
      if (start < 0) {
        const keep = heldBack(data, this.#start);
        this.#pending = new Uint8Array(data.subarray(data.length - keep)); // a copy
        return { output: data.subarray(0, data.length - keep), payload: null, rest: EMPTY };
      }
      output = data.subarray(0, start);
      data = data.subarray(start + this.#start.length);
      this.#inMarker = true;
    }
    const end = data.indexOf(this.#end);
    if (end < 0) {
      if (data.length > MAX_PAYLOAD) {
        throw new Error("bash session protocol error: marker unterminated");
      }
      this.#pending = new Uint8Array(data); // a copy: `data` may view the caller's chunk
      return { output, payload: null, rest: EMPTY };
    }
    this.#inMarker = false;
    this.#pending = EMPTY;
    return {
      output,
      payload: data.toString("utf8", 0, end),
      rest: data.subarray(end + this.#end.length),
    };
  }

  /** At end of stream: bytes held back that turned out not to start a marker. */
  flush(): Uint8Array {
    const rest = this.#inMarker ? EMPTY : this.#pending;
    this.#pending = EMPTY;
    this.#inMarker = false;
    return rest;
  }

  #join(chunk: Uint8Array): Buffer {
    if (this.#pending.length === 0) {
      return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    const joined = Buffer.concat([this.#pending, chunk]);
    this.#pending = EMPTY;
    return joined;
  }
}

/** How many trailing bytes of `data` are a proper prefix of `needle` and must wait. */
function heldBack(data: Buffer, needle: Buffer): number {
  for (let keep = Math.min(data.length, needle.length - 1); keep > 0; keep--) {
    if (data.compare(needle, 0, keep, data.length - keep) === 0) return keep;
  }
  return 0;
}
