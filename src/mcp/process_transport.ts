/**
 * The stdio client transport: runs an MCP server as a child process and speaks newline-delimited
 * JSON-RPC over its stdin and stdout.
 *
 * Deft uses its own transport instead of the SDK's `StdioClientTransport` because it needs what
 * that one hides: how the server exited (code or signal) and the tail of its stderr, for messages
 * that say why a server died; and the whole process tree, since servers started through `npx` or
 * a shell wrapper leave grandchildren behind when only the direct child is killed. The child gets
 * its own process group, and killing it kills the group. What it is started with (program,
 * arguments, its whole environment, its sandbox) comes from policy/process.ts's `mcpServerLaunch`.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import { type Launch, spawnChild } from "../policy/process.ts";
import { SandboxUnavailableError } from "../policy/sandbox.ts";
// @ts-types="@modelcontextprotocol/sdk/types"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** How long a server gets to exit after its stdin closes, and again after SIGTERM. */
const GRACE_MS = 2000;
/** How much of the server's stderr is kept for error messages. */
const STDERR_TAIL_BYTES = 4096;
/** How long output written just before the server exited may take to arrive. */
const DRAIN_MS = 250;
/** A server that sends a line longer than this without a newline is not speaking MCP. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** An MCP client transport over a child process's stdio. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #params: Launch;
  readonly #onStderr?: (text: string) => void;
  #child?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #status?: Deno.CommandStatus;
  #exited: Promise<void> = Promise.resolve();
  #stopping?: Promise<void>;
  #stderrTail = "";
  #reaped = false;

  constructor(params: Launch, onStderr?: (text: string) => void) {
    this.#params = params;
    this.#onStderr = onStderr;
  }

  /** The child's process id, once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Spawns the server. Throws a readable error when the command cannot be run. */
  start(): Promise<void> {
    if (this.#child) throw new Error("ProcessTransport already started");
    const { program, cwd } = this.#params;
    try {
      this.#child = spawnChild(this.#params, { stdin: "piped", detached: true });
    } catch (e) {
      throw new Error(spawnFailure(program, cwd ?? ".", e));
    }
    const child = this.#child;
    this.#writer = child.stdin.getWriter();
    const stdoutDone = this.#readStdout(child.stdout);
    this.#readStderr(child.stderr);
    this.#exited = (async () => {
      const status = await child.status;
      this.#reaped = true;
      // Let the last messages through; a grandchild holding stdout open must not hide the exit.
      await within(stdoutDone, DRAIN_MS);
      this.#status = status;
      // Whatever the server left running in its group would otherwise be orphaned.
      this.#signal(child.pid, "SIGTERM");
      try {
        this.onclose?.();
      } catch (e) {
        this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      }
    })();
    return Promise.resolve();
  }

  /** Sends one message; fails once the server has exited. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#status || this.#stopping) {
      throw new Error("the server process is not running");
    }
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  }

  /** Closes stdin and waits for the server to exit; SIGTERM, then SIGKILL, if it does not. */
  close(): Promise<void> {
    this.#stopping ??= this.#stop(true);
    return this.#stopping;
  }

  /** Stops a server that is not answering: SIGTERM at once, SIGKILL if it lingers. */
  kill(): Promise<void> {
    // A graceful close may be under way (the SDK closes on a failed handshake): cut it short.
    if (this.#child && this.#stopping && !this.#reaped) this.#signal(this.#child.pid, "SIGTERM");
    this.#stopping ??= this.#stop(false);
    return this.#stopping;
  }

  /** How the server ended, e.g. `exited with code 1`, or undefined while it runs. */
  exitDescription(): string | undefined {
    const status = this.#status;
    if (!status) return undefined;
    if (status.signal) return `was killed by ${status.signal}`;
    return `exited with code ${status.code}`;
  }

  /** The last lines the server wrote to stderr (trimmed; empty when it wrote none). */
  stderrTail(): string {
    const text = this.#stderrTail.trim();
    return this.#stderrTail.length >= STDERR_TAIL_BYTES ? `…${text}` : text;
  }

  async #stop(graceful: boolean): Promise<void> {
    const child = this.#child;
    if (!child) return;
    if (graceful) {
      await this.#writer?.close().catch(() => {});
      if (await this.#exitsWithin(GRACE_MS)) return;
    } else {
      await this.#writer?.abort().catch(() => {});
    }
    this.#signal(child.pid, "SIGTERM");
    if (await this.#exitsWithin(GRACE_MS)) return;
    this.#signal(child.pid, "SIGKILL");
    await this.#exited;
  }

  #signal(pid: number, signal: Deno.Signal): void {
    try {
      Deno.kill(-pid, signal);
    } catch {
      // No such group: signal the child alone, unless it is reaped (its pid may be reused).
      if (this.#reaped) return;
      try {
        Deno.kill(pid, signal);
      } catch {
        // Exited meanwhile.
      }
    }
  }

  #exitsWithin(ms: number): Promise<boolean> {
    return within(this.#exited, ms);
  }

  async #readStdout(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const chunk of stdout) {
        pending += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#deliver(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
        if (pending.length > MAX_LINE_BYTES) {
          this.onerror?.(new Error("the server sent a line of over 64 MB; it was dropped"));
          pending = "";
        }
      }
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  #deliver(line: string): void {
    const text = line.replace(/\r$/, "");
    if (text.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch {
      // Servers that print logs to stdout break the protocol; say so and carry on.
      const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      this.onerror?.(new Error(`the server wrote a line that is not JSON-RPC: ${shown}`));
      return;
    }
    this.onmessage?.(message);
  }

  async #readStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stderr) {
        const text = decoder.decode(chunk, { stream: true });
        this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_BYTES);
        this.#onStderr?.(text);
      }
    } catch {
      // stderr only feeds messages; losing it must not break the connection.
    }
  }
}

/** True when `promise` settles within `ms`; the timer never outlives the race. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `command` could not start in `cwd`, phrased to follow "MCP server 'x' ". */
export function spawnFailure(command: string, cwd: string, e: unknown): string {
  if (e instanceof Deno.errors.NotFound) {
    try {
      Deno.statSync(cwd);
    } catch {
      return `its working directory ${cwd} does not exist`;
    }
    return `the command '${command}' was not found (is it installed and on PATH?)`;
  }
  if (e instanceof Deno.errors.PermissionDenied) {
    return `the command '${command}' is not executable`;
  }
  if (e instanceof SandboxUnavailableError) return `cannot be sandboxed: ${e.message}`;
  return `the command '${command}' could not be started: ${(e as Error).message ?? e}`;
}
