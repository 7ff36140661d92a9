/**
 * Plain-HTTP requests through the proxy (plain.ts), spoken to directly on its Unix socket with
 * servers of the test's own on 127.0.0.1: the request the destination receives (one rewritten
 * head, the body's framing), what is sent behind it on the same connection (never forwarded),
 * and the answer relayed raw (byte-exact, to a slow reader, to a client that half-closed).
 */
import assert from "node:assert/strict";
import http from "node:http";
import { startNetworkProxy } from "../../../src/policy/network/proxy.ts";
import { parseEntry } from "../../../src/policy/network/rules.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** A server on 127.0.0.1 that runs `serve` for each connection; its port, count and stop. */
function rawServer(serve: (conn: Deno.Conn) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  let accepted = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      accepted++;
      open.add(conn);
      void serve(conn).catch(() => {}).finally(() => open.delete(conn));
    }
  })().catch(() => {});
  return {
    port: listener.addr.port,
    get accepted() {
      return accepted;
    },
    async close() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch {
          // Already closed.
        }
      }
      await accepting;
    },
  };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array) {
  let done = 0;
  while (done < bytes.length) done += await conn.write(bytes.subarray(done));
}

/** Reads `conn` to its end, `pauseMs` between reads of at most `chunk` bytes (a slow client). */
async function readAll(conn: Deno.Conn, chunk = 65536, pauseMs = 0): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const buffer = new Uint8Array(chunk);
  for (let n; (n = await conn.read(buffer).catch(() => null)) !== null;) {
    parts.push(buffer.slice(0, n));
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
  }
  const all = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** Reads until the end of a request head; the head and what came with it. */
async function readHead(conn: Deno.Conn): Promise<string> {
  let text = "";
  const buffer = new Uint8Array(4096);
  while (!text.includes("\r\n\r\n")) {
    const n = await conn.read(buffer);
    if (n === null) break;
    text += decode(buffer.subarray(0, n));
  }
  return text;
}

function proxyFor(ports: number[], idleMs?: number) {
  return startNetworkProxy({
    list: { allow: ports.map((p) => parseEntry(`127.0.0.1:${p}`)), deny: [] },
    idleMs,
    connectMs: 2_000,
  });
}

Deno.test("plain proxy: requests sent behind the first on one connection reach no destination", async () => {
  // Each server records every byte it is sent, until the proxy closes the connection.
  const seen = { a: "", b: "" };
  const server = (key: "a" | "b") =>
    rawServer(async (conn) => {
      seen[key] += await readHead(conn);
      await writeAll(conn, encode("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"));
      await conn.closeWrite();
      seen[key] += decode(await readAll(conn));
      conn.close();
    });
  const a = server("a");
  const b = server("b");
  // Both are allowed: the second request would be forwarded if it were taken as one.
  const proxy = await proxyFor([a.port, b.port]);
  try {
    const behind = [
      `GET http://127.0.0.1:${b.port}/second HTTP/1.1\r\nHost: 127.0.0.1:${b.port}\r\n\r\n`,
      `CONNECT 127.0.0.1:${b.port} HTTP/1.1\r\nHost: 127.0.0.1:${b.port}\r\n\r\nsecond`,
    ];
    for (const second of behind) {
      seen.a = "";
      const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
      await writeAll(
        conn,
        encode(
          `GET http://127.0.0.1:${a.port}/first HTTP/1.1\r\nHost: 127.0.0.1:${a.port}\r\n` +
            `Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\n\r\n${second}`,
        ),
      );
      const answer = decode(await readAll(conn));
      conn.close();
      assert.equal(answer, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none");
      assert.match(seen.a, /^GET \/first HTTP\/1.1\r\nHost: 127\.0\.0\.1:\d+\r\n/);
      assert.match(seen.a, /\r\nConnection: close\r\n\r\n$/);
      assert.doesNotMatch(seen.a, /second|Proxy-Authorization|keep-alive/i);
      assert.equal(b.accepted, 0, `${second.slice(0, 7)} behind a request reached its host`);
    }
  } finally {
    await proxy.close();
    await a.close();
    await b.close();
  }
});

Deno.test("plain proxy: a chunked request body reaches the destination whole, framed", async () => {
  const got: { te?: string; length?: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      got.push({
        te: req.headers["transfer-encoding"],
        length: req.headers["content-length"],
        body: Buffer.concat(parts).toString(),
      });
      res.end("stored");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  const proxy = await proxyFor([port]);
  try {
    const pieces = ["x", "hello ".repeat(5000), "0\r\n", "end"];
    const chunked = pieces.map((p) => `${p.length.toString(16)}\r\n${p}\r\n`).join("") +
      "0\r\n\r\n";
    const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
    const head = `POST http://127.0.0.1:${port}/up HTTP/1.1\r\nHost: x\r\n` +
      "Transfer-Encoding: chunked\r\n\r\n";
    // In two writes, split inside a chunk: the framing is the parser's, not the reads'.
    await writeAll(conn, encode(head + chunked.slice(0, 100)));
    await new Promise((r) => setTimeout(r, 20));
    await writeAll(conn, encode(chunked.slice(100)));
    const answer = decode(await readAll(conn));
    conn.close();
    assert.match(answer, /^HTTP\/1.1 200 OK\r\n[\s\S]*\r\n\r\nstored$/);
    assert.deepEqual(got, [{ te: "chunked", length: undefined, body: pieces.join("") }]);
  } finally {
    await proxy.close();
    await new Promise((r) => server.close(r));
  }
});

/** A server that answers any request with a head and `body`, then closes. */
function downloadServer(body: Uint8Array) {
  return rawServer(async (conn) => {
    await readHead(conn);
    await writeAll(
      conn,
      encode(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`),
    );
    await writeAll(conn, body);
    conn.close();
  });
}

function pattern(size: number): Uint8Array {
  const body = new Uint8Array(size);
  for (let i = 0; i < size; i++) body[i] = (i * 7 + (i >> 12)) & 0xff;
  return body;
}

/** The body after the head in `answer`, checked byte for byte against `body`. */
function assertBody(answer: Uint8Array, body: Uint8Array, what: string) {
  const text = decode(answer.subarray(0, 200));
  const end = text.indexOf("\r\n\r\n");
  assert.ok(end > 0, `${what}: no answer head in ${JSON.stringify(text.slice(0, 80))}`);
  assert.match(text.slice(0, end), /^HTTP\/1.1 200 OK\r\n/);
  const got = answer.subarray(end + 4);
  assert.equal(got.length, body.length, `${what}: ${body.length - got.length} bytes lost`);
  for (let i = 0; i < body.length; i++) {
    if (got[i] !== body[i]) assert.fail(`${what}: byte ${i} differs`);
  }
}

Deno.test("plain proxy: a 100 MB download arrives byte-exact, also to a client that half-closed", async () => {
  const body = pattern(100 * 1024 * 1024);
  const server = downloadServer(body);
  const proxy = await proxyFor([server.port]);
  try {
    for (const halfClose of [false, true]) {
      const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
      await writeAll(
        conn,
        encode(`GET http://127.0.0.1:${server.port}/big HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      // Done sending (as `nc -N` is): the answer must still come whole.
      if (halfClose) await conn.closeWrite();
      const answer = await readAll(conn, 256 * 1024);
      conn.close();
      assertBody(answer, body, halfClose ? "half-closed client" : "client");
    }
  } finally {
    await proxy.close();
    await server.close();
  }
});

Deno.test("plain proxy: a slow reader gets every byte, and a download is not cut as idle", async () => {
  const body = pattern(3 * 1024 * 1024);
  const server = downloadServer(body);
  // Reads 15 ms apart take ~3 s in all, well past the idle bound: the answer flowing is not idle.
  const proxy = await proxyFor([server.port], 1_000);
  try {
    const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
    await writeAll(
      conn,
      encode(`GET http://127.0.0.1:${server.port}/big HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    const answer = await readAll(conn, 16384, 15);
    conn.close();
    assertBody(answer, body, "slow reader");
  } finally {
    await proxy.close();
    await server.close();
  }
});

Deno.test("plain proxy: a client reusing the connection to a server that keeps it open is cut soon, not left waiting", async () => {
  // Ignores `Connection: close`: answers each request and keeps the connection open.
  let seen = "";
  const server = rawServer(async (conn) => {
    const buffer = new Uint8Array(65536);
    for (let n; (n = await conn.read(buffer)) !== null;) {
      seen += decode(buffer.subarray(0, n));
      await writeAll(
        conn,
        encode("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nhi\n"),
      );
    }
  });
  const proxy = await proxyFor([server.port]);
  try {
    const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
    const request = (path: string) =>
      encode(`GET http://127.0.0.1:${server.port}/${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await writeAll(conn, request("first"));
    const buffer = new Uint8Array(4096);
    let first = "";
    while (!first.endsWith("hi\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      first += decode(buffer.subarray(0, n));
    }
    assert.match(first, /^HTTP\/1.1 200 OK\r\n[\s\S]*\r\n\r\nhi\n$/);
    // As a keep-alive client does (curl, pip): the next request on the same connection.
    const start = performance.now();
    await writeAll(conn, request("second"));
    // Not cut within 8 s (the idle bound is 5 min): the test closes it itself and fails.
    let cut = true;
    const giveUp = setTimeout(() => {
      cut = false;
      conn.close();
    }, 8_000);
    const rest = decode(await readAll(conn));
    clearTimeout(giveUp);
    if (cut) conn.close();
    assert.ok(cut, `still open after ${Math.round(performance.now() - start)} ms`);
    assert.equal(rest, "", "the second request was answered");
    assert.doesNotMatch(seen, /second/);
  } finally {
    await proxy.close();
    await server.close();
  }
});
