/**
 * A Deno connection seen by `node:http` as a socket: the proxy (proxy.ts) accepts its Unix
 * socket natively and hands each connection to the HTTP parser through this stream, so that once
 * a `CONNECT` head is parsed the connection can be taken back (`detach`) and relayed natively
 * (forwarder.ts `splice`), with no Node stream on the tunnel's path. A plain-HTTP request keeps
 * its reads here (node:http parses the request body) but takes the write side (`takeWrites`): the
 * answer is relayed natively, and nothing node:http writes or ends reaches the connection. Reads
 * are pulled one at a time, so the parser's own backpressure holds; a connection silent for
 * `idleMs` both ways is closed.
 */
import { Duplex } from "node:stream";
import { Buffer } from "node:buffer";

const READ_BYTES = 64 * 1024;

/** What `detach` hands back: the connection and what was already read from it. */
export interface Detached {
  conn: Deno.Conn;
  /** Bytes read from the connection that the parser did not take. */
  buffered: Uint8Array;
  /** A read under way when it was detached (null when the connection had ended). */
  pending?: Promise<Uint8Array | null>;
}

/** A Duplex over `conn`; see the module's comment. */
export class ConnDuplex extends Duplex {
  #reading?: Promise<Uint8Array | null>;
  #detached = false;
  /** True once `detach` took the connection back. */
  get detached(): boolean {
    return this.#detached;
  }
  #writing?: Promise<void>;
  #writesTaken = false;
  /** True once `takeWrites` handed the write side to a caller. */
  get writesTaken(): boolean {
    return this.#writesTaken;
  }
  #writesDone = false;
  #onCut?: () => void;
  #closed = false;
  #last = Date.now();
  #timer?: ReturnType<typeof setTimeout>;

  constructor(readonly conn: Deno.Conn, readonly idleMs: number) {
    super({ allowHalfOpen: true });
    this.#timer = setTimeout(this.#checkIdle, idleMs);
    Deno.unrefTimer(this.#timer);
  }

  #checkIdle = () => {
    if (this.#detached || this.#closed) return;
    const quiet = Date.now() - this.#last;
    if (quiet >= this.idleMs) {
      // Cut for good, whoever holds the write side (told through `onCut`).
      this.#cut();
      this.destroy();
    } else {
      this.#timer = setTimeout(this.#checkIdle, this.idleMs - quiet);
      Deno.unrefTimer(this.#timer);
    }
  };

  override _read(): void {
    if (this.#reading || this.#detached || this.#closed) return;
    const buffer = new Uint8Array(READ_BYTES);
    const reading = this.conn.read(buffer).then((n) => n === null ? null : buffer.subarray(0, n));
    this.#reading = reading;
    reading.then((bytes) => {
      if (this.#detached) return;
      this.#reading = undefined;
      this.#last = Date.now();
      this.push(bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    }, (error) => {
      if (this.#detached) return;
      // A broken connection: a relay holding the write side has nobody left to write to.
      if (this.#writesTaken) this.#cut();
      this.destroy(error);
    });
  }

  override _write(chunk: Buffer, _encoding: string, callback: (e?: Error | null) => void): void {
    // The write side belongs to the caller of `takeWrites`: node:http's own words are dropped.
    if (this.#writesTaken) return callback();
    this.#writing = (async () => {
      let written = 0;
      while (written < chunk.length) written += await this.conn.write(chunk.subarray(written));
      this.#last = Date.now();
    })();
    this.#writing.then(() => callback(), (e) => callback(e));
  }

  override _final(callback: (e?: Error | null) => void): void {
    if (this.#writesTaken) return callback();
    this.conn.closeWrite().then(() => callback(), () => callback());
  }

  override _destroy(error: Error | null, callback: (e?: Error | null) => void): void {
    // A write under way (a refusal's answer) is let finish first, as a kernel socket would. A
    // relay still writing keeps the idle cut.
    if (!this.#writesTaken || this.#writesDone) clearTimeout(this.#timer);
    const close = () => {
      // A relay still writing closes the connection itself when it is done (`writesDone`).
      if (!this.#detached && (!this.#writesTaken || this.#writesDone)) this.#close();
      callback(error);
    };
    if (this.#writing) this.#writing.then(close, close);
    else close();
  }

  #cut(): void {
    this.#close();
    const onCut = this.#onCut;
    this.#onCut = undefined;
    onCut?.();
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }

  /**
   * Takes the connection back from the stream: nothing more is read into it; what it holds and a
   * read under way are handed over. The stream's writes still work until it is destroyed, which
   * then no longer closes the connection: the caller owns it.
   */
  detach(): Detached {
    this.#detached = true;
    clearTimeout(this.#timer);
    const held: Uint8Array[] = [];
    for (let chunk; (chunk = this.read()) !== null;) held.push(chunk as Uint8Array);
    const pending = this.#reading?.catch(() => null);
    this.#reading = undefined;
    return { conn: this.conn, buffered: Buffer.concat(held), pending };
  }

  /**
   * Hands the write side to the caller, who writes to `conn` itself (calling `touch` as it goes)
   * while node:http still reads and parses: from now on what node:http writes is dropped, its end
   * of the stream does not half-close the connection and its destroy does not close it until the
   * caller says `writesDone`. The idle cut and a broken read still close it, and call `onCut`.
   */
  takeWrites(onCut: () => void): void {
    this.#writesTaken = true;
    this.#onCut = onCut;
  }

  /** The caller of `takeWrites` wrote something: the connection is not idle. */
  touch(): void {
    this.#last = Date.now();
  }

  /** The caller of `takeWrites` is done writing: the connection closes with the stream. */
  writesDone(): void {
    this.#writesDone = true;
    if (this.destroyed) this.#close();
  }

  /** Closes the connection (after `detach`, when the caller gives up on it). */
  close(): void {
    this.#close();
  }
}
