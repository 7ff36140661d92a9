/**
 * The SOCKS5 side of the network proxy: a second Unix socket in the proxy's private folder, next
 * to the HTTP proxy's, for clients that speak SOCKS (`SOCKS_PROXY=socks5h://…`, `curl
 * --socks5-hostname`). The protocol is `@pondwader/socks5-server`'s; the decision is the HTTP
 * proxy's own (decider.ts: the list, the name resolved here, the checked address connected to).
 *
 * Offered: CONNECT with "no authentication", to a name, an IPv4 or an IPv6 address. BIND and UDP
 * ASSOCIATE are refused with "command not supported" (UDP has no way out at all); a client that
 * offers only other authentication methods gets "no acceptable methods"; a greeting that is not
 * SOCKS5 (SOCKS4, HTTP, garbage) is cut at once. The handshake has a deadline (its size is bounded
 * by the protocol itself: every field has a one-byte length), and a tunnel silent both ways for
 * the idle time is cut, as in the HTTP proxy.
 */
import net from "node:net";
import { isIP } from "node:net";
import { Socks5Server } from "@pondwader/socks5-server";
import { type Decider, parseAuthority } from "./decider.ts";

/** How the SOCKS5 server is bounded. */
export interface SocksOptions {
  /** Milliseconds a tunnel may stay silent (both ways) before it is cut. */
  idleMs: number;
  /** Milliseconds to connect to a destination. */
  connectMs: number;
  /** Milliseconds from accepting a connection to the end of its request (default 10 s). */
  handshakeMs?: number;
  /** Most connections at once. */
  maxConnections: number;
}

/** A running SOCKS5 server. */
export interface SocksServer {
  /** Stops listening and cuts every connection. */
  close(): Promise<void>;
}

type Connection = Parameters<Socks5Server["connectionHandler"]>[0];
type Status = Parameters<Parameters<Socks5Server["connectionHandler"]>[1]>[0];

const DEFAULT_HANDSHAKE_MS = 10_000;
/** Bytes a client may send after its request, before the destination answered. */
const MAX_EARLY_BYTES = 64 * 1024;

/** Starts the SOCKS5 server on `socketPath` (in the proxy's private folder). */
export async function startSocksServer(
  socketPath: string,
  decider: Decider,
  options: SocksOptions,
): Promise<SocksServer> {
  const sockets = new Set<net.Socket>();
  const socks = new Socks5Server();
  // All three commands are read to their end, so BIND and UDP ASSOCIATE get a whole reply
  // ("command not supported") from the handler rather than a cut.
  socks.supportedCommands = new Set(["connect", "bind", "udp"]);
  const handshakeMs = options.handshakeMs ?? DEFAULT_HANDSHAKE_MS;
  // Each connection's handshake deadline, until its request has been read.
  const deadlines = new Map<unknown, ReturnType<typeof setTimeout>>();
  const handshook = (client: unknown) => {
    clearTimeout(deadlines.get(client));
    deadlines.delete(client);
  };
  socks.setConnectionHandler((connection, sendStatus) => {
    handshook(connection.socket);
    void answer(decider, connection, sendStatus, options);
  });
  const server = net.createServer((client: net.Socket) => {
    sockets.add(client);
    deadlines.set(client, setTimeout(() => client.destroy(), handshakeMs));
    client.on("close", () => {
      handshook(client);
      sockets.delete(client);
    });
    client.on("error", () => client.destroy());
    socks._handleConnection(client);
  });
  server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  server.unref();
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closed;
    },
  };
}

/** The request's destination as the HTTP proxy would write it: IPv6 in brackets, compressed. */
function destination(connection: Connection): string {
  const address = connection.destAddress;
  if (isIP(address) !== 6) return `${address}:${connection.destPort}`;
  return `${new URL(`http://[${address}]/`).hostname}:${connection.destPort}`;
}

/** Decides the request of `connection` and, when allowed, joins it to its destination. */
async function answer(
  decider: Decider,
  connection: Connection,
  sendStatus: (status: Status) => void,
  options: SocksOptions,
): Promise<void> {
  const client = connection.socket as net.Socket;
  // What the client sends before the destination answered is held (bounded), not lost.
  const early: Buffer[] = [];
  let earlyBytes = 0;
  const hold = (chunk: Buffer) => {
    early.push(chunk);
    earlyBytes += chunk.length;
    if (earlyBytes > MAX_EARLY_BYTES) client.destroy();
  };
  client.on("data", hold);
  client.setTimeout(options.idleMs, () => client.destroy());
  const target = parseAuthority(destination(connection));
  if (connection.command !== "connect") {
    const what = connection.command === "udp" ? "UDP ASSOCIATE" : "BIND";
    await decider.refuse(
      target?.host ?? connection.destAddress,
      connection.destPort,
      `SOCKS5 ${what} is not offered, only CONNECT`,
    );
    return sendStatus("COMMAND_NOT_SUPPORTED");
  }
  if (!target) return sendStatus("HOST_UNREACHABLE");
  const verdict = await decider.decide(target.host, target.port);
  if (client.destroyed) return;
  if (!verdict.allowed) return sendStatus("CONNECTION_NOT_ALLOWED");
  const upstream = net.connect({ host: verdict.address, port: verdict.port });
  let connected = false;
  upstream.setTimeout(
    options.connectMs,
    () => upstream.destroy(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })),
  );
  upstream.on("error", (error: Error & { code?: string }) => {
    if (!connected && !client.destroyed) sendStatus(failure(error.code));
    client.destroy();
  });
  upstream.once("connect", () => {
    connected = true;
    upstream.setTimeout(options.idleMs, () => {
      upstream.destroy();
      client.destroy();
    });
    sendStatus("REQUEST_GRANTED");
    client.off("data", hold);
    for (const chunk of early) upstream.write(chunk);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
}

/** The SOCKS5 reply for a failed connection to an allowed destination. */
function failure(code: string | undefined): Status {
  if (code === "ECONNREFUSED") return "CONNECTION_REFUSED";
  if (code === "ENETUNREACH") return "NETWORK_UNREACHABLE";
  if (code === "EHOSTUNREACH" || code === "ETIMEDOUT") return "HOST_UNREACHABLE";
  return "GENERAL_FAILURE";
}
