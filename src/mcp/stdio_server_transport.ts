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
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_MAX_LINE_BYTES, readLines } from "../line_reader.ts";
import { intake } from "./jsonrpc_intake.ts";

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
  readonly #maxLineBytes: number;
  #reader?: ReadableStreamDefaultReader<Uint8Array>;
  #writes: Promise<void> = Promise.resolve();
  #closed = false;
  /** Ids of the requests received and not yet answered. */
  readonly #unanswered = new Set<string | number>();
  #onAnswered?: () => void;

  constructor(
    streams: StdioStreams = { input: Deno.stdin.readable, output: Deno.stdout },
    options: { maxLineBytes?: number } = {},
  ) {
    this.#streams = streams;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.ended = new Promise((resolve) => this.#endInput = resolve);
  }

  start(): Promise<void> {
    if (this.#reader) throw new Error("DenoStdioServerTransport already started");
    this.#reader = this.#streams.input.getReader();
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

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const chunks = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = await reader.read();
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
    });
    try {
      for await (const event of readLines(chunks, this.#maxLineBytes)) {
        if (this.#closed) break;
        if ("line" in event) {
          this.#deliver(event.line);
        } else {
          const problem = `a message of ${event.tooLong} bytes is over the limit of ` +
            `${this.#maxLineBytes} (--max-line-bytes); it was dropped`;
          this.#reject({
            jsonrpc: "2.0",
            id: null,
            error: { code: ErrorCode.InvalidRequest, message: problem },
          }, problem);
        }
      }
    } catch (e) {
      if (!this.#closed) this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  #deliver(text: string): void {
    if (text.trim() === "" || this.#closed) return;
    const sorted = intake(text);
    if ("ignore" in sorted) {
      this.onerror?.(new Error(sorted.ignore));
      return;
    }
    if ("reply" in sorted) {
      this.#reject(sorted.reply, sorted.problem);
      return;
    }
    const message = sorted.message;
    if ("method" in message && "id" in message) this.#unanswered.add(message.id);
    // A cancelled request gets no answer (MCP says so), so it is not waited for.
    if ("method" in message && message.method === "notifications/cancelled") {
      this.#settle((message.params as { requestId?: unknown } | undefined)?.requestId);
      this.#checkAnswered();
    }
    this.onmessage?.(message);
  }

  // Answers a line that is not a valid request with its JSON-RPC error, and reports it.
  #reject(reply: unknown, problem: string): void {
    const shown = problem.length > 300 ? `${problem.slice(0, 300)}…` : problem;
    this.onerror?.(new Error(`answered an invalid message with an error: ${shown}`));
    this.send(reply as JSONRPCMessage).catch(() => {});
  }
}
