/**
 * A plain-HTTP proxy request (`GET http://host/…`), forwarded at a tunnel's cost. node:http parses
 * and checks the request head (proxy.ts: absolute form, header bounds, smuggling refusals); the
 * destination is decided on the address it connects to (decider.ts); then ONE rewritten head
 * (origin form, hop-by-hop and `Proxy-*` headers dropped, `Connection: close`) goes to a native
 * connection to that address, the request body follows with the framing node:http checked
 * (`Content-Length`, or re-chunked), and the answer's bytes are relayed back raw until the
 * destination closes, as in a tunnel: the client only ever hears from the host it was allowed.
 *
 * One request per client connection: anything sent after the first request (a pipelined second
 * one, perhaps to another host) is parsed by node:http and dropped, never sent anywhere. A client
 * that reuses the connection reconnects.
 */
import type http from "node:http";
import { Buffer } from "node:buffer";
import type { Decider } from "./decider.ts";
import type { ConnDuplex } from "./conn_duplex.ts";

/** A client connection that carried a plain-HTTP request: nothing else goes over it. */
interface Claim {
  /** When the destination last sent something. */
  lastRead: number;
  /** Closes the destination's connection (once there is one). */
  cut?: () => void;
  /** The answer is over. */
  ended: boolean;
  watching: boolean;
}

const claims = new WeakMap<object, Claim>();

/** How long the destination may stay silent once the client sent more: then it is cut. */
const QUIET_MS = 1_000;

/** True when a plain-HTTP request already took this client connection. */
export function isClaimed(socket: object): boolean {
  return claims.has(socket);
}

/**
 * Something came behind the connection's plain-HTTP request (another request, a CONNECT): it is
 * not forwarded, and nothing more is read (a flood of pipelined requests would each hold an
 * answer node:http waits on). The first answer goes on while the destination sends; once it is
 * silent for `QUIET_MS` (it ignored `Connection: close` and keeps the connection, so the client,
 * reusing it, would wait for ever), both connections are closed and the client reconnects.
 */
export function refuseBehind(socket: ConnDuplex): void {
  socket.destroy();
  const claim = claims.get(socket);
  if (!claim || claim.watching) return;
  claim.watching = true;
  const check = () => {
    if (claim.ended) return;
    if (claim.cut && Date.now() - claim.lastRead >= QUIET_MS) return claim.cut();
    Deno.unrefTimer(setTimeout(check, QUIET_MS / 4));
  };
  check();
}

/** Hop-by-hop headers, the proxy's own, and those rewritten here: never passed on as sent. */
const DROPPED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "transfer-encoding",
  // node:http has already answered `100 Continue`.
  "expect",
]);

/** Bounds and bookkeeping of one forward. */
export interface PlainOptions {
  idleMs: number;
  connectMs: number;
  /** Open connections, closed with the proxy: the destination's joins them while it is open. */
  conns: Set<Deno.Conn>;
  /** A refusal's text: `Blocked by Deft: host:port reason`. */
  refusalText: (host: string, port: number, reason: string) => string;
  /** A reason phrase safe for a status line. */
  phrase: (text: string) => string;
}

/** Forwards one absolute-form request; see the module's comment. */
export async function forwardPlain(
  decider: Decider,
  req: http.IncomingMessage,
  options: PlainOptions,
): Promise<void> {
  // The proxy hands node:http its connections as ConnDuplex streams (proxy.ts).
  const socket = req.socket as unknown as ConnDuplex;
  if (claims.has(socket)) return refuseBehind(socket);
  const claim: Claim = { lastRead: Date.now(), ended: false, watching: false };
  claims.set(socket, claim);
  // From here everything this connection is answered is written natively, whatever node:http
  // does with what follows (a half-close ends its stream, a CONNECT behind destroys it).
  let closeUpstream = () => {};
  socket.takeWrites(() => closeUpstream());
  const refuse = async (status: number, text: string) => {
    // Its body is read and dropped, so the client is not cut off mid-send.
    req.resume();
    const body = `${text}\n`;
    const answer = `HTTP/1.1 ${status} ${options.phrase(text)}\r\ncontent-type: text/plain\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
    try {
      await writeAll(socket.conn, Buffer.from(answer));
      await socket.conn.closeWrite();
    } catch {
      socket.destroy();
    } finally {
      claim.ended = true;
      socket.writesDone();
    }
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
  const head = requestHead(req, url);
  if (!head) return refuse(400, "Refused by Deft: a header holds a line break or NUL");
  const port = url.port ? Number(url.port) : 80;
  const verdict = await decider.decide(url.hostname, port);
  if (!verdict.allowed) return refuse(403, options.refusalText(url.hostname, port, verdict.reason));
  let upstream: Deno.Conn;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.connectMs);
  try {
    upstream = await Deno.connect({
      hostname: verdict.address,
      port: verdict.port,
      signal: abort.signal,
    });
  } catch {
    return refuse(502, `Deft could not reach ${url.host}`);
  } finally {
    clearTimeout(timer);
  }
  options.conns.add(upstream);
  let closed = false;
  claim.cut = closeUpstream = () => {
    if (closed) return;
    closed = true;
    options.conns.delete(upstream);
    try {
      upstream.close();
    } catch {
      // Already closed.
    }
  };
  const chunked = req.headers["transfer-encoding"] !== undefined;
  const sending = (async () => {
    await writeAll(upstream, head);
    for await (const chunk of req as AsyncIterable<Buffer>) {
      if (chunk.length === 0) continue;
      await writeAll(
        upstream,
        chunked
          ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, CRLF])
          : chunk,
      );
    }
    if (chunked) await writeAll(upstream, LAST_CHUNK);
  })();
  // A body the destination stopped reading, or a client gone mid-body: the answer decides.
  sending.catch(() => req.resume());
  try {
    await relay(upstream, socket, claim);
    await socket.conn.closeWrite();
  } catch {
    socket.destroy();
  } finally {
    claim.ended = true;
    closeUpstream();
    socket.writesDone();
  }
  // The connection serves no other request: it ends when the client closes it (or idles).
}

const CRLF = Buffer.from("\r\n");
const LAST_CHUNK = new TextEncoder().encode("0\r\n\r\n");

/** The request head sent to the destination, or undefined when a header is not safe to send. */
function requestHead(req: http.IncomingMessage, url: URL): Uint8Array | undefined {
  // Headers the client names in `Connection` are hop-by-hop too.
  const named = new Set(
    String(req.headers.connection ?? "").split(",").map((t) => t.trim().toLowerCase()),
  );
  const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    const lower = name.toLowerCase();
    if (DROPPED.has(lower) || named.has(lower)) continue;
    if (/[\r\n\0]/.test(name) || /[\r\n\0]/.test(raw[i + 1])) return undefined;
    lines.push(`${name}: ${raw[i + 1]}`);
  }
  const te = req.headers["transfer-encoding"];
  const length = req.headers["content-length"];
  if (te !== undefined) lines.push(`Transfer-Encoding: ${te}`);
  else if (length !== undefined) lines.push(`Content-Length: ${length}`);
  lines.push("Connection: close", "", "");
  return Buffer.from(lines.join("\r\n"), "latin1");
}

const BUFFER_BYTES = 256 * 1024;

async function writeAll(to: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await to.write(bytes.subarray(written));
}

/** The destination's bytes to the client, raw, until the destination closes. */
async function relay(from: Deno.Conn, to: ConnDuplex, claim: Claim): Promise<void> {
  const buffers = [new Uint8Array(BUFFER_BYTES), new Uint8Array(BUFFER_BYTES)];
  let which = 0;
  let reading: Promise<number | null> = from.read(buffers[which]);
  try {
    for (;;) {
      const n = await reading;
      if (n === null) return;
      to.touch();
      claim.lastRead = Date.now();
      const full = buffers[which];
      which ^= 1;
      // The next read goes on while this chunk is written.
      reading = from.read(buffers[which]);
      await writeAll(to.conn, full.subarray(0, n));
      to.touch();
    }
  } catch (e) {
    reading.catch(() => {});
    throw e;
  }
}
