/**
 * Drains one output pipe of the shell for as long as it is open, so no writer ever blocks on a
 * full pipe, and routes the bytes to the running command's capture until its end marker. Output
 * that arrives between commands (from background jobs) is kept, up to a cap, and handed to the
 * next command.
 */
import { MarkerScanner } from "./marker_scanner.ts";

/** Where a command's bytes go. A returned promise makes the pump wait (back-pressure). */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<void> | void;
}

// Background output kept between commands; older bytes beyond this are dropped and counted.
const IDLE_CAP = 1024 * 1024;

/** Reads `stream` until it ends, splitting it at markers made from `tag`. */
export class StreamPump {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #scanner: MarkerScanner;
  readonly #encoder = new TextEncoder();
  #sink: ByteSink | null = null;
  #backlog: Uint8Array[] = [];
  #idle: Uint8Array[] = [];
  #idleBytes = 0;
  #idleDropped = 0;
  #waiter: ((payload: string | null) => void) | null = null;
  #ended = false;
  /** Resolves when the stream has ended (or was cancelled) and every byte was delivered. */
  readonly ended: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>, tag: string) {
    this.#reader = stream.getReader();
    this.#scanner = new MarkerScanner(tag);
    this.ended = this.#loop();
  }

  /**
   * Routes output to `sink`, starting with what arrived since the last command, until the next
   * marker. Resolves with the marker's payload, or null when the stream ends first.
   */
  async begin(sink: ByteSink): Promise<string | null> {
    if (this.#waiter) throw new Error("StreamPump.begin called while a command is running");
    const idle = this.#takeIdle();
    if (this.#ended) {
      for (const bytes of idle) await sink.write(bytes);
      return null;
    }
    this.#backlog = idle;
    this.#sink = sink;
    return await new Promise((resolve) => this.#waiter = resolve);
  }

  /** Stops reading; `ended` resolves soon after. */
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }

  async #loop(): Promise<void> {
    try {
      while (true) {
        const { value, done } = await this.#reader.read();
        if (done) break;
        await this.#feed(value);
      }
    } catch {
      // A read error means the pipe is gone: the same as its end.
    } finally {
      try {
        const rest = this.#scanner.flush();
        if (rest.length > 0) await this.#deliver(rest);
        if (this.#sink) await this.#deliver(new Uint8Array(0)); // flushes the backlog
      } finally {
        this.#ended = true;
        this.#sink = null;
        const waiter = this.#waiter;
        this.#waiter = null;
        waiter?.(null);
        this.#reader.releaseLock();
      }
    }
  }

  async #feed(chunk: Uint8Array): Promise<void> {
    let data = chunk;
    while (true) {
      const { output, payload, rest } = this.#scanner.push(data);
      if (output.length > 0) await this.#deliver(output);
      if (payload === null) return;
      if (this.#sink) await this.#deliver(new Uint8Array(0));
      const waiter = this.#waiter;
      this.#waiter = null;
      this.#sink = null;
      waiter?.(payload);
      if (rest.length === 0) return;
      data = rest;
    }
  }

  async #deliver(bytes: Uint8Array): Promise<void> {
    const sink = this.#sink;
    if (!sink) return this.#keepIdle(bytes);
    if (this.#backlog.length > 0) {
      const backlog = this.#backlog;
      this.#backlog = [];
      for (const earlier of backlog) await sink.write(earlier);
    }
    if (bytes.length > 0) await sink.write(bytes);
  }

  #keepIdle(bytes: Uint8Array): void {
    this.#idle.push(bytes);
    this.#idleBytes += bytes.length;
    while (this.#idleBytes > IDLE_CAP && this.#idle.length > 1) {
      const dropped = this.#idle.shift()!;
      this.#idleBytes -= dropped.length;
      this.#idleDropped += dropped.length;
    }
  }

  #takeIdle(): Uint8Array[] {
    const idle = this.#idle;
    if (this.#idleDropped > 0) {
      idle.unshift(this.#encoder.encode(
        `[${this.#idleDropped} bytes of background output from between calls were dropped]\n`,
      ));
    }
    this.#idle = [];
    this.#idleBytes = 0;
    this.#idleDropped = 0;
    return idle;
  }
}
