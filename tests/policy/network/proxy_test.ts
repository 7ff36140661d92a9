/**
 * The proxy's own bounds, spoken to directly on its Unix socket (no sandbox, no process):
 * malformed and oversized requests, IPv6 without brackets, requests that are not proxy requests,
 * smuggling-shaped heads, idle connections, and its private folder.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { startNetworkProxy } from "../../../src/policy/network/proxy.ts";
import { parseEntry } from "../../../src/policy/network/rules.ts";

/** Sends `text` on the proxy's socket; resolves with everything it answered and when it closed. */
function exchange(socket: string, text: string): Promise<{ answer: string; ms: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const client = net.connect(socket, () => client.write(text));
    client.on("data", (c: Buffer) => chunks.push(c));
    client.on("error", () => {});
    client.on(
      "close",
      () => resolve({ answer: Buffer.concat(chunks).toString(), ms: performance.now() - start }),
    );
  });
}

async function withProxy(fn: (socket: string) => Promise<void>, idleMs?: number) {
  const proxy = await startNetworkProxy({
    list: { allow: [parseEntry("good.test")], deny: [] },
    resolve: () => Promise.resolve(["203.0.113.7"]),
    idleMs,
    connectMs: 500,
  });
  try {
    await fn(proxy.socketPath);
  } finally {
    await proxy.close();
  }
}

Deno.test("proxy: malformed, oversized and non-proxy requests are refused with a reason", async () => {
  await withProxy(async (socket) => {
    const cases: [string, RegExp][] = [
      [
        "CONNECT ::1:443 HTTP/1.1\r\nHost: x\r\n\r\n",
        /^HTTP\/1.1 400 .*IPv6 addresses must be in brackets/,
      ],
      ["CONNECT good.test HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1.1 400 .*CONNECT needs host:port/],
      ["CONNECT good.test:99999 HTTP/1.1\r\nHost: x\r\n\r\n", /^HTTP\/1.1 400 /],
      [
        "GET /etc/passwd HTTP/1.1\r\nHost: good.test\r\n\r\n",
        /^HTTP\/1.1 400 .*whole http:\/\/ URL/,
      ],
      [
        "GET ftp://good.test/ HTTP/1.1\r\nHost: good.test\r\n\r\n",
        /^HTTP\/1.1 400 .*only http:\/\//,
      ],
      [
        `GET http://good.test/ HTTP/1.1\r\nHost: good.test\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
        /^HTTP\/1.1 431 /,
      ],
      [
        "POST http://good.test/ HTTP/1.1\r\nHost: good.test\r\nContent-Length: 4\r\n" +
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        /^HTTP\/1.1 400 /,
      ],
      [
        "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n",
        /^HTTP\/1.1 403 Blocked by Deft: evil\.test:443 not in allow list/,
      ],
      [
        "CONNECT good.test:22 HTTP/1.1\r\nHost: good.test:22\r\n\r\n",
        /^HTTP\/1.1 403 Blocked by Deft: good\.test:22 port 22 not allowed/,
      ],
    ];
    for (const [request, expected] of cases) {
      const { answer } = await exchange(socket, request);
      assert.match(answer, expected, JSON.stringify(request.slice(0, 60)));
    }
  });
});

Deno.test("proxy: an idle connection is cut", async () => {
  await withProxy(async (socket) => {
    // A head that never ends, then silence.
    const { answer, ms } = await exchange(socket, "CONNECT good.test:443 HTTP/1.1\r\n");
    assert.equal(answer, "");
    assert.ok(ms < 5_000, `cut after ${ms} ms`);
  }, 300);
});

Deno.test("proxy: a name that never resolves is refused, not waited on", async () => {
  const proxy = await startNetworkProxy({
    list: { allow: [parseEntry("slow.test")], deny: [] },
    resolve: () => new Promise(() => {}),
    resolveMs: 200,
  });
  try {
    const { answer } = await exchange(
      proxy.socketPath,
      "CONNECT slow.test:443 HTTP/1.1\r\nHost: slow.test:443\r\n\r\n",
    );
    assert.match(
      answer,
      /^HTTP\/1.1 403 Blocked by Deft: slow\.test:443 the name does not resolve/,
    );
  } finally {
    await proxy.close();
  }
});

Deno.test("proxy: its socket is in a private folder, removed when it closes", async () => {
  const proxy = await startNetworkProxy({ list: { allow: [], deny: [] } });
  const folder = proxy.socketPath.slice(0, proxy.socketPath.lastIndexOf("/"));
  assert.equal((await Deno.stat(folder)).mode! & 0o777, 0o700);
  await proxy.close();
  await assert.rejects(Deno.stat(folder), Deno.errors.NotFound);
});

/** A server on 127.0.0.1 that runs `serve` for each connection; its port and how to stop it. */
function upstreamServer(serve: (conn: Deno.Conn) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const accepting = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      void serve(conn).catch(() => {}).finally(() => open.delete(conn));
    }
  })().catch(() => {});
  return {
    port: listener.addr.port,
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
  for (let n; (n = await conn.read(buffer)) !== null;) {
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

async function tunnelProxy(port: number, idleMs?: number) {
  return await startNetworkProxy({
    list: { allow: [parseEntry(`127.0.0.1:${port}`)], deny: [] },
    idleMs,
    connectMs: 2_000,
  });
}

Deno.test("proxy: a tunnel passes every byte of a download that ends with the server's close, to a slow reader", async () => {
  const body = new Uint8Array(6 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 12)) & 0xff;
  // Sends everything at once and closes at once: what is still on its way must not be dropped.
  const server = upstreamServer(async (conn) => {
    await writeAll(conn, body);
    conn.close();
  });
  const proxy = await tunnelProxy(server.port);
  try {
    for (let round = 0; round < 3; round++) {
      const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
      await writeAll(
        conn,
        new TextEncoder().encode(
          `CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n\r\n`,
        ),
      );
      const got = await readAll(conn, 16384, round === 0 ? 0 : 1);
      conn.close();
      const head = "HTTP/1.1 200 Connection Established\r\n\r\n";
      assert.equal(new TextDecoder().decode(got.subarray(0, head.length)), head);
      assert.equal(got.length - head.length, body.length, `round ${round}: bytes lost`);
      assert.deepEqual(got.subarray(head.length), body);
    }
  } finally {
    await proxy.close();
    await server.close();
  }
});

Deno.test("proxy: bytes sent right behind a CONNECT head reach the destination, in order", async () => {
  // Echoes what it reads, upper-cased, until the client half-closes.
  const server = upstreamServer(async (conn) => {
    const got = await readAll(conn);
    await writeAll(conn, new TextEncoder().encode(new TextDecoder().decode(got).toUpperCase()));
    conn.close();
  });
  const proxy = await tunnelProxy(server.port);
  try {
    const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
    const early = "hello-before-the-answer;".repeat(2000);
    // One write: the head and the first bytes of the tunnel together (as a TLS client may).
    await writeAll(
      conn,
      new TextEncoder().encode(
        `CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\nHost: x\r\n\r\n${early}`,
      ),
    );
    await writeAll(conn, new TextEncoder().encode("and-after"));
    await conn.closeWrite();
    const answer = new TextDecoder().decode(await readAll(conn));
    conn.close();
    assert.equal(
      answer,
      `HTTP/1.1 200 Connection Established\r\n\r\n${early.toUpperCase()}AND-AFTER`,
    );
  } finally {
    await proxy.close();
    await server.close();
  }
});

Deno.test("proxy: a tunnel silent both ways is cut", async () => {
  const server = upstreamServer(async (conn) => {
    await readAll(conn);
  });
  const proxy = await tunnelProxy(server.port, 300);
  try {
    const conn = await Deno.connect({ transport: "unix", path: proxy.socketPath });
    const start = performance.now();
    await writeAll(
      conn,
      new TextEncoder().encode(`CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    // Not cut within 10 s: the test closes it itself and fails.
    let cut = true;
    const giveUp = setTimeout(() => {
      cut = false;
      conn.close();
    }, 10_000);
    const answer = new TextDecoder().decode(await readAll(conn).catch(() => new Uint8Array()));
    clearTimeout(giveUp);
    if (cut) conn.close();
    assert.ok(cut, `not cut after ${Math.round(performance.now() - start)} ms`);
    assert.equal(answer, "HTTP/1.1 200 Connection Established\r\n\r\n");
  } finally {
    await proxy.close();
    await server.close();
  }
});
