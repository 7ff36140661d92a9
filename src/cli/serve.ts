/**
 * `deft serve`: tool calls as NDJSON on stdin, results as NDJSON on stdout. A line holds one call
 * `{"id", "name", "arguments"}` or a JSON array of calls (a batch). Every call gets one result
 * line; a bad line gets an error line and the server goes on. Tool state lives until end of
 * input, then the tools are closed.
 *
 * Without `--parallel` the lines run one after another and are answered in input order, as a
 * script expects (a `create` before the `view` of that file). With `--parallel` each line starts
 * as soon as it is read and is answered when it finishes (a batch's calls together, in the
 * batch's order): one slow or stuck call then never holds back the answers to the others, which
 * the client matches by `id`.
 */
import type { ToolCall, ToolCallResult, ToolExecutor } from "../tools/executor.ts";
import { servedToolNames } from "../tools/catalog.ts";
import { createHostedTools } from "../tools/host/mod.ts";
import { isPlainObject } from "../tools/validate.ts";
import { hostDirs, type ToolCommandOptions, toolContext } from "./context.ts";
import { onStopSignals } from "./signals.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";
import { readLines } from "../line_reader.ts";
import { maxLineBytesOption } from "./line_limit.ts";
import { writeStdout } from "./io.ts";
import { recordCallNetwork } from "../tools/call_network.ts";
import { networkNote } from "./network_note.ts";

/** Options of `deft serve`. */
export interface ServeOptions extends ToolCommandOptions {
  parallel?: boolean;
  /** `--max-line-bytes`: the longest input line answered; longer ones get an error line. */
  maxLineBytes?: string;
  /** `--approve-asks`: what an ask rule or a hook's ask is about runs, not refused. */
  approveAsks?: boolean;
}

type Parsed = { call: ToolCall } | { reply: Reply };
type Reply = Record<string, unknown>;

/** Serves until stdin ends; returns the exit code (0). */
export async function serveCommand(opts: ServeOptions): Promise<number> {
  const maxLineBytes = maxLineBytesOption(opts.maxLineBytes);
  const context = await toolContext(opts);
  const tools = await createHostedTools(context, servedToolNames(), hostDirs(context.settings));
  // Each answer carries the network decisions of its own call; stderr shows each one.
  const unwatchNetwork = context.settings.network
    ? recordCallNetwork(tools, networkNote("deft serve"))
    : undefined;
  const { executor, hooks } = await (await import("./hooks.ts")).toolServerExecutor(
    tools,
    context.workspace,
    context.settings,
    "deft serve",
    opts.approveAsks,
  );
  // A stop signal closes the tools (ending every process they started), then exits 128 + n.
  let stopping = false;
  const removeSignals = onStopSignals(async (_name, code) => {
    if (stopping) return;
    stopping = true;
    await executor.closeTools().catch(() => {});
    await endSessionHooks(hooks, { reason: "other", deft: "signal", signal: true });
    Deno.exit(code);
  });
  const parallel = opts.parallel ?? false;
  // Replies go out a whole line group at a time, never interleaved. In order, nothing else runs
  // while a reply is written (the next line is read after it), so it is written from this thread:
  // handing it to Deno's I/O threads cost a fifth of a bash round trip. With --parallel, other
  // calls (and their deadlines) go on while a client is slow to read, so the write waits aside.
  // (In order, a stop signal that comes while a client holds a full pipe unread is acted on once
  // it reads or goes away.)
  let written = Promise.resolve();
  const write = (replies: Reply[]): Promise<void> => {
    const text = () => replies.map((r) => JSON.stringify(r) + "\n").join("");
    written = written.then(() => parallel ? writeStdout(text()) : writeStdoutSync(text()));
    return written;
  };
  const running = new Set<Promise<void>>();
  try {
    let lineNumber = 0;
    for await (const event of readLines(Deno.stdin, maxLineBytes)) {
      lineNumber++;
      if ("tooLong" in event) {
        const reply = errorReply(
          null,
          null,
          `line ${lineNumber} is ${event.tooLong} bytes, over the limit of ${maxLineBytes} ` +
            `(--max-line-bytes); it was skipped. Send smaller calls, e.g. write big content ` +
            `to a file in pieces.`,
        );
        await write([reply]);
        continue;
      }
      const line = event.line;
      if (line.trim() === "") continue;
      const answered = answer(executor, line, lineNumber, parallel).then(write);
      if (!parallel) {
        await answered;
        continue;
      }
      const tracked: Promise<void> = answered.finally(() => running.delete(tracked));
      running.add(tracked);
    }
    // End of input: every call still running is answered before the tools close.
    await Promise.all(running);
  } finally {
    removeSignals();
    if (!stopping) await executor.closeTools();
    if (!stopping) {
      await endSessionHooks(hooks, { reason: "other", deft: "input_closed" });
    }
    // After the SessionEnd hooks, whose network decisions stderr shows too.
    unwatchNetwork?.();
  }
  return 0;
}

async function answer(
  executor: ToolExecutor,
  line: string,
  lineNumber: number,
  parallel: boolean,
): Promise<Reply[]> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return [
      errorReply(null, null, `line ${lineNumber} is not valid JSON: ${(e as Error).message}`),
    ];
  }
  const batch = Array.isArray(value);
  const items = batch ? value as unknown[] : [value];
  if (items.length === 0) {
    return [errorReply(null, null, `line ${lineNumber} is an empty batch; send at least one call`)];
  }
  const parsed = items.map((item, i) =>
    parseCall(item, batch ? `${lineNumber}.${i}` : `${lineNumber}`)
  );
  const calls = parsed.flatMap((p) => "call" in p ? [p.call] : []);
  const results = parallel
    ? await executor.parallelToolCall(calls)
    : await executor.sequentialToolCall(calls);
  let next = 0;
  return parsed.map((p) => "reply" in p ? p.reply : resultReply(p.call, results[next++]));
}

function parseCall(item: unknown, where: string): Parsed {
  if (!isPlainObject(item)) {
    return { reply: errorReply(null, null, `call ${where} must be a JSON object`) };
  }
  const id = item.id ?? null;
  if (id !== null && typeof id === "object") {
    return {
      reply: errorReply(
        null,
        null,
        `call ${where} has an object or array "id"; use a string or number`,
      ),
    };
  }
  if (typeof item.name !== "string" || item.name === "") {
    return { reply: errorReply(id, null, `call ${where} needs a "name" string`) };
  }
  const args = item.arguments ?? {};
  return { call: { name: item.name, call_id: where, arguments: args, id: id as string } };
}

function resultReply(call: ToolCall, result: ToolCallResult): Reply {
  return {
    id: call.id ?? null,
    name: result.name,
    success: result.success,
    output: result.output,
    error: result.error,
    error_code: result.error_code,
    // Only with a network list, and only when the call made a connection through it.
    ...(result.record?.network ? { network: result.record.network } : {}),
  };
}

const encoder = new TextEncoder();

/**
 * Writes all of `text` to stdout from this thread: no hand-over to Deno's blocking-I/O threads,
 * which costs a small write about a tenth of a millisecond on a loaded machine. It blocks the
 * whole process while the reader holds a full pipe.
 */
function writeStdoutSync(text: string): void {
  const bytes = encoder.encode(text);
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function errorReply(id: unknown, name: string | null, error: string): Reply {
  return { id, name, success: false, output: null, error, error_code: -1 };
}
