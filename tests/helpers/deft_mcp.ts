/** Starting `deft mcp` for tests: the command line, and a raw JSON-RPC session over its stdio. */
import { REPO_ROOT } from "./deft.ts";

/** `deno` and its arguments for `deft mcp ARGS`, with the permissions of the `deft` task. */
export function deftMcpCommand(args: string[]): { command: string; args: string[] } {
  const config = JSON.parse(Deno.readTextFileSync(`${REPO_ROOT}deno.json`));
  const flags = (config.tasks.deft as string).split(/\s+/).filter((w) => w.startsWith("--allow"));
  return {
    command: Deno.execPath(),
    args: ["run", ...flags, `${REPO_ROOT}main.ts`, "mcp", ...args],
  };
}

/** A `deft mcp` process spoken to line by line, the way any stdio MCP client does. */
export class RawSession {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  /** Every line the server wrote to stdout, in order. */
  readonly stdout: string[] = [];
  stderr = "";

  constructor(args: string[]) {
    const { command, args: argv } = deftMcpCommand(args);
    const child = new Deno.Command(command, {
      args: argv,
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = lines(child.stdout)[Symbol.asyncIterator]();
    (async () => {
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
        this.stderr += text;
      }
    })();
  }

  /** Sends one JSON-RPC message. */
  async send(message: Record<string, unknown>): Promise<void> {
    await this.#writer.write(
      new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"),
    );
  }

  /** Reads the next message the server sends. */
  async next(): Promise<Record<string, unknown>> {
    const { value, done } = await this.#lines.next();
    if (done) throw new Error(`deft mcp closed its stdout. stderr:\n${this.stderr}`);
    this.stdout.push(value);
    return JSON.parse(value);
  }

  /** Initializes the session. */
  async initialize(): Promise<void> {
    await this.send({
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "raw-test", version: "1" },
      },
    });
    await this.next();
    await this.send({ method: "notifications/initialized" });
  }

  /** Calls a tool and returns its result (or the JSON-RPC error). */
  async call(id: number, name: string, args: Record<string, unknown>) {
    await this.send({ id, method: "tools/call", params: { name, arguments: args } });
    return await this.next();
  }

  /** Closes stdin if it is still open. */
  async closeStdin(): Promise<void> {
    await this.#writer.close().catch(() => {});
  }

  /** Stops reading stdout, as a client that crashed would: the server's next write fails. */
  async abandon(): Promise<void> {
    await this.#lines.return?.();
  }

  /** Closes stdin, reads what is left, and waits for the exit. */
  async end(): Promise<Deno.CommandStatus> {
    await this.#writer.close();
    for (let line = await this.#lines.next(); !line.done; line = await this.#lines.next()) {
      this.stdout.push(line.value);
    }
    return await this.child.status;
  }
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, newline);
      pending = pending.slice(newline + 1);
    }
  }
  if (pending) yield pending;
}
