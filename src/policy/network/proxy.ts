/**
 * The network proxy in Deft's own process: the sandbox's only way out. It listens on a Unix
 * socket in a private folder (mode 0700), which the sandbox gets bound in; inside, a forwarder
 * (forwarder.ts) relays a loopback port to it. It speaks HTTP through `node:http`: `CONNECT
 * host:port` opens a tunnel (HTTPS, git, pip, npm), an absolute-form request (`GET http://…`)
 * is forwarded with its body; anything else is refused.
 *
 * It decides on the destination it actually connects to: the name is checked against the list
 * (rules.ts), resolved here (the resolver is injectable, for tests), and the address it will
 * connect to is checked again (addresses.ts): loopback, private, link-local and metadata
 * addresses only when the allow list names that address itself. It connects to that address,
 * never to the name again, so an answer that changes between the check and the connection
 * (DNS rebinding) changes nothing. IPv6 only in brackets; headers bounded; idle connections cut.
 */
import http from "node:http";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { join } from "../paths.ts";
import { withSpan } from "../../telemetry/tracing.ts";
import { specialAddress } from "./addresses.ts";
import { decideByList, destinationHost, type NetworkList } from "./rules.ts";
import { ConnDuplex, type Detached } from "./conn_duplex.ts";
import { splice } from "./forwarder.ts";

/** Resolves a host name to its addresses (IPv4 and IPv6, in preference order). */
export type Resolver = (name: string) => Promise<string[]>;

/** One destination the proxy allowed or refused: host and port only, never a path. */
export interface NetworkDecision {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (`not in allow list`), or the allow entry that let it through. */
  reason: string;
  /** The address connected to (allowed), when there was one. */
  address?: string;
}

/** How the proxy is started. */
export interface ProxyOptions {
  list: NetworkList;
  /** Name resolution (default: the system's, `/etc/hosts` included). */
  resolve?: Resolver;
  /** Told of every decision, allowed or not. */
  onDecision?: (decision: NetworkDecision) => void;
  /** Milliseconds a connection may stay silent (both ways) before it is cut (default 5 min). */
  idleMs?: number;
  /** Largest request head, in bytes (default 16 KiB). */
  maxHeaderBytes?: number;
  /** Milliseconds to connect to a destination (default 15 s). */
  connectMs?: number;
  /** Milliseconds a name may take to resolve (default 10 s). */
  resolveMs?: number;
}

/** A running proxy. */
export interface NetworkProxy {
  /** The Unix socket the sandbox is given. */
  readonly socketPath: string;
  /** Stops listening, cuts every connection and removes the private folder. */
  close(): Promise<void>;
}

const DEFAULT_IDLE_MS = 5 * 60_000;
const DEFAULT_HEADER_BYTES = 16 * 1024;
const DEFAULT_CONNECT_MS = 15_000;
const MAX_CONNECTIONS = 512;
/** Milliseconds a name may take to resolve. */
const RESOLVE_MS = 10_000;

/** The system's resolver: every address of `name`, as getaddrinfo gives them. */
export const systemResolver: Resolver = async (name) =>
  (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);

/** Starts the proxy on a Unix socket in a new private folder under the system temp folder. */
export async function startNetworkProxy(options: ProxyOptions): Promise<NetworkProxy> {
  const dir = await Deno.makeTempDir({ prefix: "deft-net-" });
  await Deno.chmod(dir, 0o700);
  const socketPath = join(dir, "proxy.sock");
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  // Every connection accepted, open until closed (a tunnel's too): closed with the proxy.
  const conns = new Set<Deno.Conn>();
  const server = http.createServer({
    maxHeaderSize: options.maxHeaderBytes ?? DEFAULT_HEADER_BYTES,
  });
  server.on("clientError", (error: Error & { code?: string }, socket: ConnDuplex) => {
    if (socket.writable) {
      socket.end(
        error.code === "HPE_HEADER_OVERFLOW"
          ? "HTTP/1.1 431 Request Header Fields Too Large (refused by Deft's network proxy)\r\n\r\n"
          : "HTTP/1.1 400 Bad Request (refused by Deft's network proxy)\r\n\r\n",
      );
    }
    socket.destroy();
  });
  const decider = new Decider(options);
  server.on("connect", (req: http.IncomingMessage, client: ConnDuplex, head: Buffer) => {
    // The head is parsed: the connection leaves node:http and is relayed natively.
    const taken = client.detach();
    void tunnel(decider, req.url ?? "", taken, head, idleMs, options.connectMs)
      .finally(() => conns.delete(taken.conn));
  });
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    void forward(decider, req, res, idleMs, options.connectMs);
  });
  // Accepted natively and handed to node:http as a stream (conn_duplex.ts), so that a tunnel
  // can take its connection back once its head is parsed.
  const listener = Deno.listen({ transport: "unix", path: socketPath });
  // Anyone who can reach the socket may connect: a container's own user, mapped to another id
  // on the host, must. The private folder (0700) is what keeps the host's other users out.
  await Deno.chmod(socketPath, 0o666);
  void (async () => {
    try {
      for await (const conn of listener) {
        if (conns.size >= MAX_CONNECTIONS) {
          conn.close();
          continue;
        }
        conns.add(conn);
        const socket = new ConnDuplex(conn, idleMs);
        socket.on("error", () => socket.destroy());
        socket.on("close", () => {
          if (!socket.detached) conns.delete(conn);
        });
        server.emit("connection", socket);
      }
    } catch {
      // The listener was closed.
    }
  })();
  // Like the server it replaces: a listening proxy alone does not keep Deft running.
  listener.unref();
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    close() {
      closed ??= (async () => {
        try {
          listener.close();
        } catch {
          // Already closed.
        }
        for (const conn of conns) {
          try {
            conn.close();
          } catch {
            // Already closed.
          }
        }
        conns.clear();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      })();
      return closed;
    },
  };
}

/** A destination the proxy will connect to, or why not. */
type Verdict =
  | { allowed: true; host: string; port: number; address: string }
  | { allowed: false; host: string; port: number; reason: string };

/** Checks destinations against the list and the addresses they resolve to. */
class Decider {
  constructor(private readonly options: ProxyOptions) {}

  decide(host: string, port: number): Promise<Verdict> {
    // One span per destination asked for: host and port, whether it went, never a path.
    return withSpan("deft.network", {
      "server.address": host,
      "server.port": port,
    }, async (span) => {
      const verdict = await this.#reported(host, port);
      span.set({ "deft.network.allowed": verdict.allowed });
      if (!verdict.allowed) {
        span.set({ "deft.network.reason": verdict.reason });
        span.fail("blocked");
      }
      return verdict;
    });
  }

  async #reported(host: string, port: number): Promise<Verdict> {
    const verdict = await this.#decide(host, port);
    this.options.onDecision?.(
      verdict.allowed
        ? { host, port, allowed: true, reason: "allowed", address: verdict.address }
        : { host, port, allowed: false, reason: verdict.reason },
    );
    return verdict;
  }

  async #decide(host: string, port: number): Promise<Verdict> {
    const refuse = (reason: string): Verdict => ({ allowed: false, host, port, reason });
    const { list } = this.options;
    const byName = decideByList(list, host, port);
    if (!byName.allowed) return refuse(byName.reason);
    const dest = destinationHost(host);
    let addresses: string[];
    if (dest.address) addresses = [host.replace(/^\[|\]$/g, "")];
    else {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error("timed out")),
            this.options.resolveMs ?? RESOLVE_MS,
          );
        });
        addresses = await Promise.race([
          (this.options.resolve ?? systemResolver)(dest.host),
          timeout,
        ]);
      } catch {
        return refuse("the name does not resolve");
      } finally {
        clearTimeout(timer);
      }
    }
    let firstRefusal: string | undefined;
    for (const address of addresses) {
      if (isIP(address) === 0) continue;
      const special = specialAddress(address);
      if (!special) return { allowed: true, host, port, address };
      // A special address passes only when the list names that very address.
      const byAddress = decideByList(
        { allow: list.allow.filter((e) => e.kind === "address"), deny: list.deny },
        address,
        port,
      );
      if (byAddress.allowed) return { allowed: true, host, port, address };
      firstRefusal ??= `resolves to ${address}, ${special}; allow "${
        isIP(address) === 6 ? `[${address}]` : address
      }:${port}" to reach it`;
    }
    return refuse(firstRefusal ?? "the name has no address");
  }
}

/** `host:port` of a CONNECT, IPv6 only in brackets; undefined when malformed. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = authority.match(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  if (m[1].startsWith("[") && isIP(m[1].slice(1, -1)) !== 6) return undefined;
  return { host: m[1], port };
}

/** A reason phrase safe for a status line: printable ASCII, bounded. */
function phrase(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, 300);
}

function refusalText(host: string, port: number, reason: string): string {
  return `Blocked by Deft: ${host}:${port} ${reason}`;
}

async function tunnel(
  decider: Decider,
  authority: string,
  client: Detached,
  head: Buffer,
  idleMs: number,
  connectMs = DEFAULT_CONNECT_MS,
): Promise<void> {
  const { conn } = client;
  const answer = async (text: string) => {
    try {
      await writeAll(conn, new TextEncoder().encode(text));
    } catch {
      // The client went away.
    }
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  };
  const target = parseAuthority(authority);
  if (!target) {
    const why = authority.includes(":") && !authority.startsWith("[") &&
        authority.split(":").length > 2
      ? "IPv6 addresses must be in brackets"
      : "CONNECT needs host:port";
    return await answer(`HTTP/1.1 400 ${phrase(`Refused by Deft: ${why}`)}\r\n\r\n`);
  }
  const verdict = await decider.decide(target.host, target.port);
  if (!verdict.allowed) {
    const text = refusalText(target.host, target.port, verdict.reason);
    return await answer(
      `HTTP/1.1 403 ${phrase(text)}\r\ncontent-type: text/plain\r\n` +
        `content-length: ${Buffer.byteLength(text) + 1}\r\nconnection: close\r\n\r\n${text}\n`,
    );
  }
  let upstream: Deno.Conn;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), connectMs);
  try {
    upstream = await Deno.connect({
      hostname: verdict.address,
      port: verdict.port,
      signal: abort.signal,
    });
  } catch {
    return await answer(`HTTP/1.1 502 ${phrase(`Deft could not connect to ${authority}`)}\r\n\r\n`);
  } finally {
    clearTimeout(timer);
  }
  try {
    await writeAll(conn, ESTABLISHED);
  } catch {
    upstream.close();
    conn.close();
    return;
  }
  // What came after the head (the parser's leftover, then what the stream still held, then a
  // read under way) goes first, in that order.
  await splice(conn, upstream, {
    toB: Buffer.concat([head, client.buffered]),
    pendingFromA: client.pending,
    idleMs,
  });
}

const ESTABLISHED = new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n");

async function writeAll(to: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await to.write(bytes.subarray(written));
}

/** Hop-by-hop headers and the proxy's own: never passed on. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

async function forward(
  decider: Decider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  idleMs: number,
  connectMs = DEFAULT_CONNECT_MS,
): Promise<void> {
  const refuse = (status: number, text: string) => {
    res.writeHead(status, phrase(text), { "content-type": "text/plain", connection: "close" });
    res.end(`${text}\n`);
  };
  let url: URL;
  try {
    url = new URL(req.url ?? "");
  } catch {
    return refuse(400, "Refused by Deft: a proxy request names a whole http:// URL");
  }
  if (url.protocol !== "http:" || url.username || url.password) {
    return refuse(400, `Refused by Deft: only http:// URLs without credentials are forwarded`);
  }
  const port = url.port ? Number(url.port) : 80;
  const verdict = await decider.decide(url.hostname, port);
  if (!verdict.allowed) return refuse(403, refusalText(url.hostname, port, verdict.reason));
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    headers[name] = value;
  }
  headers.host = url.host;
  headers.connection = "close";
  const upstream = http.request({
    host: verdict.address,
    port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    agent: false,
    timeout: connectMs,
  });
  upstream.on("timeout", () => upstream.destroy(new Error("timed out")));
  upstream.on("error", () => {
    if (!res.headersSent) refuse(502, `Deft could not reach ${url.host}`);
    else res.destroy();
  });
  upstream.on("response", (answer) => {
    upstream.setTimeout(idleMs);
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out);
    answer.pipe(res);
  });
  req.pipe(upstream);
}
