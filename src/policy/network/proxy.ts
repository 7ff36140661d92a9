/**
 * The network proxy in Deft's own process: the sandbox's only way out. It listens on a Unix
 * socket in a private folder (mode 0700), which the sandbox gets bound in; inside, a forwarder
 * (forwarder.ts) relays a loopback port to it. It speaks HTTP through `node:http`: `CONNECT
 * host:port` opens a tunnel (HTTPS, git, pip, npm), an absolute-form request (`GET http://…`)
 * is forwarded with its body, its answer relayed raw (plain.ts); anything else is refused.
 *
 * It decides on the destination it actually connects to (decider.ts: the list, the name resolved
 * here, the address checked and connected to, never the name again). IPv6 only in brackets;
 * headers bounded; idle connections cut. The SOCKS5 server (socks.ts) listens in the same private
 * folder and takes the same decision: one Decider for both.
 */
import http from "node:http";
import { join } from "../paths.ts";
import { Decider, type DecisionOptions, parseAuthority } from "./decider.ts";
import { ConnDuplex, type Detached } from "./conn_duplex.ts";
import { splice } from "./forwarder.ts";
import { startSocksServer } from "./socks.ts";
import { socksSocketOf } from "./launch.ts";
import { forwardPlain, isClaimed, refuseBehind } from "./plain.ts";

export { type NetworkDecision, parseAuthority, type Resolver, systemResolver } from "./decider.ts";

/** How the proxy is started: the decision's options (decider.ts) and the proxy's bounds. */
export interface ProxyOptions extends DecisionOptions {
  /** Milliseconds a connection may stay silent (both ways) before it is cut (default 5 min). */
  idleMs?: number;
  /** Largest request head, in bytes (default 16 KiB). */
  maxHeaderBytes?: number;
  /** Milliseconds to connect to a destination (default 15 s). */
  connectMs?: number;
  /** Milliseconds a SOCKS5 client has for its greeting and request (default 10 s). */
  handshakeMs?: number;
}

/** A running proxy. */
export interface NetworkProxy {
  /** The Unix socket the sandbox is given (HTTP). */
  readonly socketPath: string;
  /** The SOCKS5 server's Unix socket, next to it in the same private folder. */
  readonly socksPath: string;
  /** Stops listening, cuts every connection and removes the private folder. */
  close(): Promise<void>;
}

const DEFAULT_IDLE_MS = 5 * 60_000;
const DEFAULT_HEADER_BYTES = 16 * 1024;
const DEFAULT_CONNECT_MS = 15_000;
const MAX_CONNECTIONS = 512;

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
    // Behind a plain-HTTP request on the same connection (plain.ts): never a tunnel.
    if (isClaimed(client)) return refuseBehind(client);
    // The head is parsed: the connection leaves node:http and is relayed natively.
    const taken = client.detach();
    void tunnel(decider, req.url ?? "", taken, head, idleMs, options.connectMs)
      .finally(() => conns.delete(taken.conn));
  });
  server.on("request", (req: http.IncomingMessage) => {
    void forwardPlain(decider, req, {
      idleMs,
      connectMs: options.connectMs ?? DEFAULT_CONNECT_MS,
      conns,
      refusalText,
      phrase,
    });
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
  const closeListener = () => {
    try {
      listener.close();
    } catch {
      // Already closed.
    }
  };
  const socksPath = socksSocketOf(socketPath);
  const socks = await startSocksServer(socksPath, decider, {
    idleMs,
    connectMs: options.connectMs ?? DEFAULT_CONNECT_MS,
    handshakeMs: options.handshakeMs,
    maxConnections: MAX_CONNECTIONS,
  }).catch(async (error) => {
    closeListener();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw error;
  });
  await Deno.chmod(socksPath, 0o666);
  let closed: Promise<void> | undefined;
  return {
    socketPath,
    socksPath,
    close() {
      closed ??= (async () => {
        closeListener();
        await socks.close();
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
