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
