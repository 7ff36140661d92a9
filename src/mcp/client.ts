/**
 * One configured MCP server, seen from Deft: started (stdio) or reached (streamable HTTP) on
 * first use, asked for its tools, and called. A call never throws: a crash, a timeout or a lost
 * connection comes back as a failed result that says what happened, and the server is restarted
 * (or reconnected) on the next call.
 *
 * The SDK is imported when the first connection opens, so that importing this module costs
 * nothing on the start-up path of commands that may not need MCP.
 */
// The SDK's export map points `*.js` subpaths at `*.js.d.ts` files that do not exist, so types
// are imported by the extension-less subpath (which resolves its `.d.ts`).
import { type Launch, mcpServerLaunch, type ProcessPolicy } from "../policy/process.ts";
import type { Client } from "@modelcontextprotocol/sdk/client/index";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport";
import type { Tool as RemoteTool } from "@modelcontextprotocol/sdk/types";
import { basename, isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { McpServerConfig } from "../config/schema.ts";
import { fail, type ToolExecResult } from "../tools/base.ts";
import { VERSION } from "../version.ts";
import { toToolResult } from "./content.ts";
import type { ProcessTransport } from "./process_transport.ts";

export type { RemoteTool };

/** Seconds a call may take when the server's config sets no `timeout`. */
export const DEFAULT_TIMEOUT_SECONDS = 60;

/**
 * Seconds at least that starting a server (handshake and tool list) may take. A short call
 * `timeout` must not fail a server that `npx` is still downloading.
 */
export const MIN_STARTUP_TIMEOUT_SECONDS = 30;

const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long closing waits for an HTTP server to acknowledge the end of the session. */
const GOODBYE_MS = 2000;

/** Settings shared by every connection. */
export interface ConnectionOptions {
  /** Where stdio servers start unless their config sets `cwd` (relative ones resolve here). */
  workspace: string;
  /**
   * The session's policy: stdio servers run in its sandbox unless their entry says `sandbox:
   * none` (policy/process.ts `mcpServerLaunch`). Without one they run as the user.
   */
  policy?: ProcessPolicy;
  /** Receives what stdio servers write to stderr (default: kept only for error messages). */
  onStderr?: (server: string, text: string) => void;
  /** Least seconds a start may take (default `MIN_STARTUP_TIMEOUT_SECONDS`). */
  minStartupSeconds?: number;
  /**
   * The server was configured by the user's own config file, so what it says of its tools
   * (`readOnlyHint`: a tool that only reads, which the approval gate then does not ask about) is
   * believed. A server from a repository's config file could claim anything: its tools are asked
   * about like any tool that cannot say what it does. Default false.
   */
  annotationsTrusted?: boolean;
}

/** A failed start: what went wrong, phrased to follow "MCP server 'x' ". */
export class McpStartError extends Error {
  constructor(readonly server: string, readonly reason: string) {
    super(`MCP server '${server}' ${reason}`);
    this.name = "McpStartError";
  }
}

interface Session {
  client: Client;
  transport: Transport;
  process?: ProcessTransport;
  /** Set once the session is over; says why, for the calls that were in flight. */
  lost?: string;
  /** Aborts the calls in flight when the connection breaks under them. */
  inflight: Set<AbortController>;
}

type ClientModule = typeof import("@modelcontextprotocol/sdk/client/index");
type HttpModule = typeof import("@modelcontextprotocol/sdk/client/streamableHttp");
type TypesModule = typeof import("@modelcontextprotocol/sdk/types");

interface Sdk {
  Client: ClientModule["Client"];
  StreamableHTTPClientTransport: HttpModule["StreamableHTTPClientTransport"];
  StreamableHTTPError: HttpModule["StreamableHTTPError"];
  McpError: TypesModule["McpError"];
  ErrorCode: TypesModule["ErrorCode"];
  ListRootsRequestSchema: TypesModule["ListRootsRequestSchema"];
  ProcessTransport: typeof import("./process_transport.ts").ProcessTransport;
  spawnFailure: typeof import("./process_transport.ts").spawnFailure;
}

let sdkPromise: Promise<Sdk> | undefined;

/** The SDK (and the transport built on it), loaded on first use and then shared. */
function sdk(): Promise<Sdk> {
  sdkPromise ??= (async () => {
    const [client, http, types, processTransport] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js") as Promise<ClientModule>,
      import("@modelcontextprotocol/sdk/client/streamableHttp.js") as Promise<HttpModule>,
      import("@modelcontextprotocol/sdk/types.js") as Promise<TypesModule>,
      import("./process_transport.ts"),
    ]);
    return {
      Client: client.Client,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      StreamableHTTPError: http.StreamableHTTPError,
      McpError: types.McpError,
      ErrorCode: types.ErrorCode,
      ListRootsRequestSchema: types.ListRootsRequestSchema,
      ProcessTransport: processTransport.ProcessTransport,
      spawnFailure: processTransport.spawnFailure,
    };
  })();
  return sdkPromise;
}

/** A connection to one MCP server. */
export class McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly #options: ConnectionOptions;
  readonly #timeoutMs: number;
  readonly #startupMs: number;
  #session?: Session;
  #opening?: Promise<Session>;
  #opened = false;
  #closed = false;
  readonly #stopping = new Set<Promise<void>>();

  constructor(name: string, config: McpServerConfig, options: ConnectionOptions) {
    this.name = name;
    this.config = config;
    this.#options = options;
    // Timers fire at once past 2^31-1 ms (about 24 days), so longer timeouts are capped there.
    this.#timeoutMs = Math.min((config.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000, MAX_TIMER_MS);
    const minStartup = options.minStartupSeconds ?? MIN_STARTUP_TIMEOUT_SECONDS;
    this.#startupMs = Math.min(Math.max(this.#timeoutMs, minStartup * 1000), MAX_TIMER_MS);
  }

  /** Whether the server's own word on its tools (`readOnlyHint`) counts (see ConnectionOptions). */
  get annotationsTrusted(): boolean {
    return this.#options.annotationsTrusted === true;
  }

  /** `stdio` for servers Deft runs, `http` for servers it reaches by URL. */
  get kind(): "stdio" | "http" {
    return this.config.command ? "stdio" : "http";
  }

  /** The process id of a running stdio server (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.#session?.process?.pid;
  }

  /** Starts the server if needed and lists its tools. Throws `McpStartError`. */
  async listTools(): Promise<RemoteTool[]> {
    const session = await this.#current();
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await session.client.listTools(cursor ? { cursor } : undefined, {
          timeout: this.#startupMs,
        });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
    } catch (e) {
      this.#abandon(session);
      const why = session.lost ?? message(e);
      throw new McpStartError(this.name, `could not list its tools: ${why}${stderrNote(session)}`);
    }
    return tools;
  }

  /** Calls remote tool `tool`. Never throws. */
  async callTool(tool: string, args: Record<string, unknown>): Promise<ToolExecResult> {
    if (this.#closed) return fail(`MCP server '${this.name}' is closed.`);
    const restart = this.#opened && !this.#session;
    let session: Session;
    try {
      session = await this.#current();
    } catch (e) {
      const message = e instanceof McpStartError ? e.message : `MCP server '${this.name}': ${e}`;
      if (!restart) return fail(message);
      const doing = this.kind === "stdio" ? "restarting it" : "reconnecting";
      return fail(`${message} (while ${doing} for a call to '${tool}')`);
    }
    const { McpError, ErrorCode } = await sdk();
    const abort = new AbortController();
    session.inflight.add(abort);
    try {
      const result = await session.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: this.#timeoutMs,
        signal: abort.signal,
      });
      return toToolResult(result as Parameters<typeof toToolResult>[0], this.name, tool);
    } catch (e) {
      const where = `MCP server '${this.name}'`;
      if (session.lost) {
        return fail(
          `${where} ${session.lost} during the call to '${tool}'. ${this.#nextCall()}` +
            stderrNote(session),
        );
      }
      if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
        this.#abandon(session);
        return fail(
          `${where} did not answer the call to '${tool}' within ${this.#timeoutMs / 1000} s; ` +
            `the call was abandoned. ${this.#nextCall()}`,
        );
      }
      if (e instanceof McpError && e.code !== ErrorCode.ConnectionClosed) {
        // The server answered with a JSON-RPC error (unknown tool, bad params): it is healthy.
        return fail(`${where} refused the call to '${tool}': ${e.message}`);
      }
      this.#abandon(session);
      return fail(
        `${where} failed during the call to '${tool}': ${message(e)}. ${this.#nextCall()}`,
      );
    } finally {
      session.inflight.delete(abort);
    }
  }

  /** Stops the server (or ends the HTTP session). Later calls fail; closing twice is harmless. */
  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#session ?? await this.#opening?.catch(() => undefined);
    this.#session = undefined;
    if (session) this.#stop(session, true);
    await Promise.all(this.#stopping);
  }

  #nextCall(): string {
    return this.kind === "stdio"
      ? "The server will be restarted on the next call."
      : "Deft will reconnect on the next call.";
  }

  #current(): Promise<Session> {
    if (this.#closed) return Promise.reject(new McpStartError(this.name, "is closed"));
    if (this.#session) return Promise.resolve(this.#session);
    this.#opening ??= this.#open().finally(() => this.#opening = undefined);
    return this.#opening;
  }

  async #open(): Promise<Session> {
    const lib = await sdk();
    // Announcing the workspace as the one root lets servers that honour roots (the reference
    // filesystem server, for one) confine themselves to it.
    const client = new lib.Client({ name: "deft", version: VERSION }, {
      capabilities: { roots: { listChanged: false } },
    });
    const workspace = this.#options.workspace;
    client.setRequestHandler(lib.ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(workspace).href, name: basename(workspace) || workspace }],
    }));
    const inflight = new Set<AbortController>();
    let session: Session;
    if (this.config.command) {
      const process = new lib.ProcessTransport(
        this.#processParams(this.config.command, lib),
        this.#options.onStderr && ((text) => this.#options.onStderr!(this.name, text)),
      );
      session = { client, transport: process, process, inflight };
    } else if (this.config.url) {
      let url: URL;
      try {
        url = new URL(this.config.url);
      } catch {
        throw new McpStartError(this.name, `has an invalid url '${this.config.url}'`);
      }
      const transport = new lib.StreamableHTTPClientTransport(url, {
        requestInit: { headers: this.config.headers },
        fetch: watchedFetch((e) => this.#lose(session, `lost its connection (${message(e)})`)),
      });
      session = { client, transport, inflight };
    } else {
      throw new McpStartError(this.name, "has neither 'command' (stdio) nor 'url' (HTTP)");
    }
    client.onclose = () => this.#lose(session, session.process?.exitDescription() ?? "closed");
    // Stray output and stream hiccups are reported here; what matters surfaces in the calls.
    client.onerror = () => {};
    try {
      await client.connect(session.transport, { timeout: this.#startupMs });
    } catch (e) {
      this.#stop(session, false);
      throw new McpStartError(this.name, this.#startFailure(session, e, lib));
    }
    if (this.#closed) {
      this.#stop(session, true);
      throw new McpStartError(this.name, "is closed");
    }
    this.#opened = true;
    this.#session = session;
    return session;
  }

  #processParams(command: string, lib: Sdk): Launch {
    const cwd = this.config.cwd;
    const dir = cwd === undefined
      ? this.#options.workspace
      : isAbsolute(cwd)
      ? cwd
      : resolve(this.#options.workspace, cwd);
    try {
      return mcpServerLaunch({
        command,
        args: this.config.args,
        env: this.config.env,
        cwd: dir,
        sandbox: this.config.sandbox,
      }, this.#options.policy);
    } catch (e) {
      // A sandboxed server's program or folder is checked before bwrap starts.
      throw new McpStartError(this.name, lib.spawnFailure(command, dir, e));
    }
  }

  #startFailure(session: Session, e: unknown, lib: Sdk): string {
    if (e instanceof McpStartError) return e.reason;
    const exit = session.process?.exitDescription();
    if (exit) return `${exit} during start-up${stderrNote(session)}`;
    if (e instanceof lib.McpError && e.code === lib.ErrorCode.RequestTimeout) {
      return `did not finish the MCP handshake within ${this.#startupMs / 1000} s` +
        stderrNote(session);
    }
    if (e instanceof lib.StreamableHTTPError && e.code !== undefined) {
      const hint = e.code === 401 || e.code === 403 ? " (check its 'headers')" : "";
      return `answered HTTP ${e.code} at ${this.config.url}${hint}: ${e.message}`;
    }
    if (this.kind === "http") return `could not be reached at ${this.config.url}: ${message(e)}`;
    return `could not be started: ${message(e)}${stderrNote(session)}`;
  }

  /** Marks `session` as over (the server died or the connection broke) and fails its calls. */
  #lose(session: Session, why: string): void {
    if (session.lost) return;
    session.lost = why;
    if (this.#session === session) this.#session = undefined;
    for (const abort of session.inflight) abort.abort(new Error(session.lost));
    this.#stop(session, false);
  }

  /** Gives up on a session that misbehaved; the next call opens a new one. */
  #abandon(session: Session): void {
    if (this.#session === session) this.#session = undefined;
    this.#stop(session, false);
  }

  #stop(session: Session, graceful: boolean): void {
    const stopping = (async () => {
      const transport = session.transport as Transport & { terminateSession?: () => Promise<void> };
      try {
        if (graceful && transport.terminateSession) {
          // A polite goodbye, but a server that does not answer must not hold up the exit.
          await within(transport.terminateSession(), GOODBYE_MS);
        }
        if (!graceful && session.process) await session.process.kill();
        await session.client.close();
      } catch {
        // Stopping is best effort; the process transport has killed what it started.
      }
    })();
    this.#stopping.add(stopping);
    stopping.then(() => this.#stopping.delete(stopping));
  }
}

function stderrNote(session: Session): string {
  const tail = session.process?.stderrTail();
  return tail ? `\nIts stderr ended with:\n${tail}` : "";
}

async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, ms));
  try {
    await Promise.race([promise.catch(() => {}), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function message(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
  return `${e.message}${cause}`;
}

/**
 * `fetch` that reports a response body which breaks off. Over streamable HTTP a call's answer
 * arrives on the response stream of its POST; when the server dies, that stream errors, but the
 * SDK only logs it and lets the call wait for its timeout. Reporting the break lets the call fail
 * at once.
 */
function watchedFetch(onBroken: (error: unknown) => void): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method !== "POST" || response.status !== 200 || !response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (e) {
          onBroken(e);
          controller.error(e);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
