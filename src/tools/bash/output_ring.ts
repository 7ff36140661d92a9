/**
 * A background shell's unread output: bytes kept up to a limit in one circular buffer (grown as
 * needed, never past the limit), the oldest overwritten first, and how many were dropped since
 * the last read. A shell printing without end holds a bounded amount of memory however long
 * nobody reads it, and reading it leaves no garbage per chunk.
 */

const FIRST_CAPACITY = 64 * 1024;

/** Bytes in arrival order, at most `limit` of them; what did not fit is counted. */
export class OutputRing {
  #buffer = new Uint8Array(0);
  #start = 0;
  #size = 0;
  #dropped = 0;

  constructor(readonly limit: number) {}

  /** Bytes held. */
  get size(): number {
    return this.#size;
  }

  /** Adds a copy of `bytes` at the end, dropping the oldest bytes beyond the limit. */
  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (bytes.length >= this.limit) {
      this.#dropped += this.#size + bytes.length - this.limit;
      this.#grow(this.limit);
      this.#buffer.set(bytes.subarray(bytes.length - this.limit));
      this.#start = 0;
      this.#size = this.limit;
      return;
    }
    this.#grow(Math.min(this.limit, this.#size + bytes.length));
    const capacity = this.#buffer.length;
    const over = this.#size + bytes.length - capacity;
    if (over > 0) {
      this.#start = (this.#start + over) % capacity;
      this.#size -= over;
      this.#dropped += over;
    }
    const end = (this.#start + this.#size) % capacity;
    const first = Math.min(bytes.length, capacity - end);
    this.#buffer.set(bytes.subarray(0, first), end);
    if (first < bytes.length) this.#buffer.set(bytes.subarray(first), 0);
    this.#size += bytes.length;
  }

  /** Everything held and the count of bytes dropped since the last take; empties the ring. */
  take(): { bytes: Uint8Array; dropped: number } {
    const bytes = this.#linear();
    const dropped = this.#dropped;
    this.#start = 0;
    this.#size = 0;
    this.#dropped = 0;
    return { bytes, dropped };
  }

  /** Puts back bytes taken but not used (a line not yet complete), ahead of what came since. */
  unshift(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const since = this.take();
    this.push(bytes);
    this.push(since.bytes);
    this.#dropped += since.dropped;
  }

  /** Drops the bytes held, counting them as dropped, and frees the buffer. */
  dropAll(): void {
    this.#dropped += this.#size;
    this.#buffer = new Uint8Array(0);
    this.#start = 0;
    this.#size = 0;
  }

  /** The bytes held, in order, as one new array. */
  #linear(): Uint8Array {
    const out = new Uint8Array(this.#size);
    const first = Math.min(this.#size, this.#buffer.length - this.#start);
    out.set(this.#buffer.subarray(this.#start, this.#start + first));
    if (first < this.#size) out.set(this.#buffer.subarray(0, this.#size - first), first);
    return out;
  }

  /** Makes room for `wanted` bytes (at most the limit), doubling, the content kept in order. */
  #grow(wanted: number): void {
    if (this.#buffer.length >= wanted) return;
    const capacity = Math.min(
      this.limit,
      Math.max(wanted, this.#buffer.length * 2, FIRST_CAPACITY),
    );
    const held = this.#linear();
    this.#buffer = new Uint8Array(capacity);
    this.#buffer.set(held);
    this.#start = 0;
  }
}
