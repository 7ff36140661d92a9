/**
 * The ACP connection's byte stream: newline-delimited JSON-RPC, as the SDK's `ndJsonStream`, but
 * a message over the size limit does not end the connection. The SDK's stream errors out on the
 * first line over its limit, so one large embedded resource closed the agent's output with no
 * word to the editor. Here the over-size line is counted and dropped (only a few kilobytes of
 * its two ends are kept, to find its id), and the client gets a JSON-RPC error for that request;
 * an over-size answer to one of Deft's own requests (a huge `fs/read_text_file`) fails that
 * request. Everything else on the connection goes on.
 */
import * as acp from "@agentclientprotocol/sdk";
import { formatSize } from "../tools/fs/size.ts";

/** The largest message Deft reads (the SDK's own default). */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** What of an over-size line is kept to find its id. */
const ENDS_BYTES = 4096;

/** One line of input: whole, or the ends and size of one over the limit. */
type Line = { bytes: Uint8Array } | { size: number; head: Uint8Array; tail: Uint8Array };

/**
 * The stream the SDK's `connect` takes, over `output` and `input` (stdout and stdin).
 *
 * @example
 * ```ts
 * app.connect(acpStream(Deno.stdout.writable, Deno.stdin.readable));
 * ```
 */
export function acpStream(
  output: WritableStream<Uint8Array>,
  input: ReadableStream<Uint8Array>,
  maxMessageBytes = MAX_MESSAGE_BYTES,
): acp.Stream {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let writing = Promise.resolve();
  const writeJson = (message: unknown): Promise<void> => {
    const bytes = encoder.encode(JSON.stringify(message) + "\n");
    const write = writing.then(async () => {
      const writer = output.getWriter();
      try {
        await writer.write(bytes);
      } finally {
        writer.releaseLock();
      }
    });
    writing = write.catch(() => {});
    return write;
  };
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let cancelled = false;
  const readable = new ReadableStream<acp.AnyMessage>({
    async start(controller) {
      reader = input.getReader();
      const take = async (line: Line) => {
        if (!("bytes" in line)) {
          const refusal = overSize(line, maxMessageBytes, decoder);
          // An answer to Deft's own request fails that request; a request gets its error.
          if (refusal.toAgent) controller.enqueue(refusal.message);
          else await writeJson(refusal.message);
          return;
        }
        const text = decoder.decode(line.bytes).trim();
        if (text === "") return;
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          await writeJson(errorResponse(null, acp.RequestError.parseError()));
          return;
        }
        if (message !== null && typeof message === "object" && !Array.isArray(message)) {
          controller.enqueue(message as acp.AnyMessage);
        } else {
          await writeJson(errorResponse(
            null,
            acp.RequestError.invalidRequest(
              undefined,
              Array.isArray(message)
                ? "JSON-RPC batches are not supported"
                : "a message must be a JSON object",
            ),
          ));
        }
      };
      try {
        for await (const line of lines(reader, maxMessageBytes)) {
          if (cancelled) return;
          await take(line);
        }
      } catch (e) {
        if (!cancelled) controller.error(e);
        return;
      } finally {
        reader.releaseLock();
      }
      if (!cancelled) controller.close();
    },
    cancel(reason) {
      cancelled = true;
      return reader?.cancel(reason);
    },
  });
  const writable = new WritableStream<acp.AnyMessage>({ write: (message) => writeJson(message) });
  return { readable, writable };
}

/** The lines of `reader`; a line over `max` bytes is not kept whole, only its ends. */
async function* lines(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  max: number,
): AsyncGenerator<Line> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let head: Uint8Array | undefined;
  let tail = new Uint8Array(0);
  const add = (piece: Uint8Array) => {
    if (head === undefined && size + piece.length > max) {
      head = concat([...parts, piece], ENDS_BYTES);
      parts = [];
    }
    size += piece.length;
    if (head === undefined) parts.push(piece.slice());
    else tail = concat([tail, piece.subarray(-ENDS_BYTES)], Infinity).slice(-ENDS_BYTES);
  };
  const finish = (): Line => {
    const line: Line = head === undefined
      ? { bytes: concat(parts, Infinity) }
      : { size, head, tail };
    parts = [];
    size = 0;
    head = undefined;
    tail = new Uint8Array(0);
    return line;
  };
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    let start = 0;
    while (start < value.length) {
      const newline = value.indexOf(0x0a, start);
      if (newline < 0) {
        add(value.subarray(start));
        break;
      }
      add(value.subarray(start, newline));
      yield finish();
      start = newline + 1;
    }
  }
  if (size > 0) yield finish();
}

/** The first `limit` bytes of `parts` joined. */
function concat(parts: Uint8Array[], limit: number): Uint8Array {
  const total = Math.min(limit, parts.reduce((n, p) => n + p.length, 0));
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    if (at >= total) break;
    const piece = part.subarray(0, total - at);
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The answer to an over-size line: an error response to the request it was (its id found at one
 * of its ends), or, when it answered one of Deft's requests, that answer replaced by an error.
 */
function overSize(
  line: { size: number; head: Uint8Array; tail: Uint8Array },
  max: number,
  decoder: TextDecoder,
): { message: acp.AnyMessage; toAgent: boolean } {
  const head = decoder.decode(line.head);
  const tail = decoder.decode(line.tail);
  // The id before the first nested object, or as the last member(s) after it.
  const front = head.split(/"(?:params|result)"\s*:/)[0];
  const id = idIn(front, /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/) ??
    idIn(
      tail,
      /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"\w+"\s*:\s*"(?:[^"\\]|\\.)*"\s*)*}\s*$/,
    );
  const answer = !/"method"\s*:/.test(front) && /"(?:result|error)"\s*:/.test(head);
  const what = answer ? "An answer from the client" : "The message";
  const error = acp.RequestError.invalidRequest(
    { size: line.size, limit: max },
    `${what} is ${formatSize(line.size)}, larger than the ${formatSize(max)} Deft reads in one ` +
      `message; none of it was read. Attach a large file as a resource link (Deft reads it from ` +
      `the workspace) rather than embedding its text.`,
  );
  return { message: errorResponse(id ?? null, error), toAgent: answer && id !== undefined };
}

function idIn(text: string, pattern: RegExp): string | number | undefined {
  const match = pattern.exec(text);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]);
  } catch {
    return undefined;
  }
}

function errorResponse(id: string | number | null, error: acp.RequestError): acp.AnyMessage {
  return { jsonrpc: "2.0", id, error: error.toErrorResponse() } as acp.AnyMessage;
}
