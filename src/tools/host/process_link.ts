/**
 * The main-thread end of a tool host that runs in another process (bubblewrap's, sandboxed.ts;
 * a container's, container.ts): one JSON message a line each way over the child's stdin and
 * stdout. Its stderr is kept, the last few KB, to say why the process died.
 */
import { readLines } from "../../line_reader.ts";
import type { LinkEvents } from "./link.ts";
import type { HostReply } from "./protocol.ts";

/** Keeps the end of what the process says on stderr, for the message when it dies. */
const STDERR_TAIL_BYTES = 4096;

/** A started process link: how to write to it, and how to stop reporting its end. */
export interface ProcessLink {
  /** Writes one message; a process that is gone is reported by its exit instead. */
  send(message: unknown): void;
  /** From now on its end is expected and not reported (the host is being stopped). */
  quiet(): void;
  /** Closes its input. */
  closeInput(): void;
}

/**
 * Links `child` to `events`. `what` names it in messages ("the sandboxed tool host");
 * `exitNote` turns its exit status and the end of its stderr into the reason given.
 */
export function linkProcess(
  child: Deno.ChildProcess,
  events: LinkEvents,
  what: string,
  exitNote: (status: Deno.CommandStatus, stderrTail: string) => string,
): ProcessLink {
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  let ended = false;
  const end = (message: string) => {
    if (ended) return;
    ended = true;
    events.failed(message);
  };
  const stderr = collectTail(child.stderr);
  void (async () => {
    for await (const event of readLines(child.stdout)) {
      if (!("line" in event)) {
        end(`${what} sent a reply of ${event.tooLong} bytes, over the limit`);
        return;
      }
      let reply: HostReply;
      try {
        reply = JSON.parse(event.line);
      } catch {
        end(`${what} sent a line that is not a message: ${event.line.slice(0, 200)}`);
        return;
      }
      events.reply(reply);
    }
  })().catch((e) => end(`reading ${what} failed: ${(e as Error).message}`));
  child.status.then(async (status) => end(exitNote(status, (await stderr).trim())));
  return {
    send: (message) => {
      writer.write(encoder.encode(`${JSON.stringify(message)}\n`)).catch(() => {
        // The process is gone; its exit is reported above.
      });
    },
    quiet: () => {
      ended = true;
    },
    closeInput: () => {
      writer.close().catch(() => {});
    },
  };
}

/** How a process ended, for messages: `code 1`, `signal SIGKILL`. */
export function describeStatus(status: Deno.CommandStatus): string {
  return status.signal ? `signal ${status.signal}` : `code ${status.code}`;
}

/** The last `STDERR_TAIL_BYTES` characters `stream` carries, once it ends. */
async function collectTail(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let tail = "";
  try {
    for await (const chunk of stream) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL_BYTES);
    }
  } catch {
    // The stream ended with the process.
  }
  return tail;
}
