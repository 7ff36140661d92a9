/**
 * A background shell's unread output: bytes kept up to a limit, the oldest dropped first, and
 * how many were dropped since the last read, so a shell printing without end holds a bounded
 * amount of memory however long nobody reads it.
 */

/** Bytes in arrival order, at most `limit` of them; what did not fit is counted. */
export class OutputRing {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #dropped = 0;

  constructor(readonly limit: number) {}

  /** Bytes held. */
  get size(): number {
    return this.#size;
  }

  /** Adds `bytes` at the end, dropping the oldest bytes beyond the limit. */
  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (bytes.length >= this.limit) {
      this.#dropped += this.#size + bytes.length - this.limit;
      this.#chunks = [bytes.slice(bytes.length - this.limit)];
      this.#size = this.limit;
      return;
    }
    // A copy: a small read may be a view of a much larger buffer, which would stay alive.
    this.#chunks.push(bytes.slice());
    this.#size += bytes.length;
    while (this.#size > this.limit) {
      const first = this.#chunks[0];
      const over = this.#size - this.limit;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#size -= first.length;
        this.#dropped += first.length;
      } else {
        this.#chunks[0] = first.subarray(over);
        this.#size -= over;
        this.#dropped += over;
      }
    }
  }

  /** Everything held and the count of bytes dropped since the last take; empties the ring. */
  take(): { bytes: Uint8Array; dropped: number } {
    const bytes = new Uint8Array(this.#size);
    let at = 0;
    for (const chunk of this.#chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    const dropped = this.#dropped;
    this.#chunks = [];
    this.#size = 0;
    this.#dropped = 0;
    return { bytes, dropped };
  }

  /** Puts back bytes taken but not used (a line not yet complete), ahead of what came since. */
  unshift(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#chunks.unshift(bytes);
    this.#size += bytes.length;
    // What came meanwhile may not leave room: keep the newest.
    if (this.#size > this.limit) {
      const all = this.take();
      this.#dropped += all.dropped;
      this.push(all.bytes);
    }
  }

  /** Frees the bytes held. */
  clear(): void {
    this.#chunks = [];
    this.#size = 0;
  }
}
