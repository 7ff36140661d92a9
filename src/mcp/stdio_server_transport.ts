/**
 * The stdio server transport of `deft mcp`: newline-delimited JSON-RPC on this process's stdin
 * and stdout, through Deno's own streams.
 *
 * The SDK's `StdioServerTransport` does not fit: it never notices the end of stdin, so a server
 * cannot tell that its client left; and through Node's `process.stdout` a write to a client that
 * went away throws an uncaught EPIPE that kills the process before the tools are closed, leaving
 * the bash session's background jobs behind. Here the end of input is reported (`ended`) without
 * closing, and `answered()` waits for the requests already received, so answers to calls sent just
 * before the end can still be written; a failed write closes the transport in an orderly way.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** A client line longer than this without a newline is not MCP; it is dropped. */
const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** Where the transport reads and writes; Deno's stdin and stdout by default. */
export interface StdioStreams {
  input: ReadableStream<Uint8Array>;
  output: { write(bytes: Uint8Array): Promise<number> };
}

/** MCP over this process's stdio. */
export class DenoStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** Resolves when the client closes its end of stdin (or reading fails). */
  readonly ended: Promise<void>;
  readonly #streams: StdioStreams;
  #endInput!: () => void;
  #reader?: ReadableStreamDefaultReader<string>;
  #writes: Promise<void> = Promise.resolve();
  #closed = false;
  /** Ids of the requests received and not yet answered. */
  readonly #unanswered = new Set<string | number>();
  #onAnswered?: () => void;

  constructor(streams: StdioStreams = { input: Deno.stdin.readable, output: Deno.stdout }) {
    this.#streams = streams;
    this.ended = new Promise((resolve) => this.#endInput = resolve);
  }

  start(): Promise<void> {
    if (this.#reader) throw new Error("DenoStdioServerTransport already started");
    this.#reader = this.#streams.input.pipeThrough(new TextDecoderStream()).getReader();
    this.#read(this.#reader).finally(() => this.#endInput());
    return Promise.resolve();
  }

  /**
   * Resolves once every request received so far has been answered (or cancelled) and the answers
   * are written.
   */
  async answered(): Promise<void> {
    if (this.#unanswered.size > 0 && !this.#closed) {
      await new Promise<void>((resolve) => this.#onAnswered = resolve);
    }
    await this.#writes;
  }

  /** Writes one message; messages never interleave, and a failed write closes the transport. */
  send(message: JSONRPCMessage): Promise<void> {
    const bytes = new TextEncoder().encode(JSON.stringify(message) + "\n");
    const write = this.#writes.then(async () => {
      if (this.#closed) throw new Error("the MCP connection is closed");
      try {
        for (let done = 0; done < bytes.length;) {
          done += await this.#streams.output.write(bytes.subarray(done));
        }
      } catch (e) {
        // The client is gone (broken pipe): there is no one left to answer.
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
        await this.close();
        throw e;
      }
    });
    this.#writes = write.catch(() => {});
    if (!("method" in message) && "id" in message) this.#settle(message.id);
    return write.finally(() => this.#checkAnswered());
  }

  /** Stops reading and reports the close once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#reader?.cancel().catch(() => {});
    this.#checkAnswered();
    this.onclose?.();
  }

  #settle(id: unknown): void {
    if (typeof id === "string" || typeof id === "number") this.#unanswered.delete(id);
  }

  #checkAnswered(): void {
    if (this.#unanswered.size > 0 && !this.#closed) return;
    this.#onAnswered?.();
    this.#onAnswered = undefined;
  }

  async #read(reader: ReadableStreamDefaultReader<string>): Promise<void> {
    let pending = "";
    try {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        pending += chunk.value;
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#deliver(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
        if (pending.length > MAX_LINE_CHARS) {
          this.onerror?.(new Error("a message of over 64 MB without a newline was dropped"));
          pending = "";
        }
      }
      if (pending.trim() !== "") this.#deliver(pending);
    } catch (e) {
      if (!this.#closed) this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  #deliver(line: string): void {
    const text = line.replace(/\r$/, "");
    if (text.trim() === "" || this.#closed) return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch {
      const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      this.onerror?.(new Error(`ignored a line that is not a JSON-RPC message: ${shown}`));
      return;
    }
    if ("method" in message && "id" in message) this.#unanswered.add(message.id);
    // A cancelled request gets no answer (MCP says so), so it is not waited for.
    if ("method" in message && message.method === "notifications/cancelled") {
      this.#settle((message.params as { requestId?: unknown } | undefined)?.requestId);
      this.#checkAnswered();
    }
    this.onmessage?.(message);
  }
}
