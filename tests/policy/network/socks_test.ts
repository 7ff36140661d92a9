/**
 * The SOCKS5 server, spoken to byte by byte on its Unix socket (no sandbox, no process): the same
 * decisions as the HTTP proxy, only CONNECT with "no authentication", greetings that are not
 * SOCKS5 cut at once, the handshake's deadline and the tunnel's idle cut.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { type NetworkDecision, startNetworkProxy } from "../../../src/policy/network/proxy.ts";
import { parseEntry } from "../../../src/policy/network/rules.ts";
import { loopbackServer } from "../../helpers/loopback.ts";

const GREETING = [5, 1, 0];

/** A CONNECT (or `command`) request for `host` (a name, or 4 or 16 address bytes) and `port`. */
function request(host: string | number[], port: number, command = 1): number[] {
  const address = typeof host === "string"
    ? [3, host.length, ...new TextEncoder().encode(host)]
    : [host.length === 4 ? 1 : 4, ...host];
  return [5, command, 0, ...address, port >> 8, port & 255];
}

/**
 * Sends `parts` on `socket`, `gapMs` apart; resolves with every byte answered, whether the server
 * closed the connection (within 20 s) and when.
 */
function exchange(
  socket: string,
  parts: (number[] | string)[],
  gapMs = 0,
): Promise<{ answer: Buffer; closed: boolean; ms: number }> {
  const start = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const client = net.connect(socket, async () => {
      for (const part of parts) {
        if (client.destroyed) break;
        client.write(typeof part === "string" ? part : Buffer.from(part));
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
    const guard = setTimeout(() => {
      client.destroy();
      resolve({ answer: Buffer.concat(chunks), closed: false, ms: performance.now() - start });
    }, 20_000);
    client.on("data", (c: Buffer) => chunks.push(c));
    client.on("error", () => {});
    client.on("close", () => {
      clearTimeout(guard);
      resolve({ answer: Buffer.concat(chunks), closed: true, ms: performance.now() - start });
    });
  });
}

/** The proxy with an allowed server, the user's own loopback service, and the decisions seen. */
async function world(bounds: { idleMs?: number; handshakeMs?: number } = {}) {
  const good = await loopbackServer("good");
  const own = await loopbackServer("private");
  const decisions: NetworkDecision[] = [];
  const proxy = await startNetworkProxy({
    list: {
      allow: [
        `good.test:${good.port}`,
        `127.0.0.1:${good.port}`,
        `rebind.test:${own.port}`,
        "good.test:443",
      ].map((e) => parseEntry(e)),
      deny: [],
    },
    resolve: (name) =>
      ["good.test", "rebind.test", "evil.test"].includes(name)
        ? Promise.resolve(["127.0.0.1"])
        : Promise.reject(new Error("no such name")),
    onDecision: (d) => decisions.push(d),
    connectMs: 2_000,
    ...bounds,
  });
  return {
    socket: proxy.socksPath,
    good,
    own,
    decisions,
    async [Symbol.asyncDispose]() {
      await proxy.close();
      await good.close();
      await own.close();
    },
  };
}

Deno.test("socks: CONNECT to an allowed name reaches it, bytes sent early included", async () => {
  await using w = await world();
  // The request and the HTTP request after it in one write: nothing the client sent is lost.
  const { answer } = await exchange(w.socket, [
    GREETING,
    [
      ...request("good.test", w.good.port),
      ...new TextEncoder().encode("GET /early HTTP/1.0\r\n\r\n"),
    ],
  ]);
  assert.deepEqual([...answer.subarray(0, 4)], [5, 0, 5, 0], "no auth chosen, then granted");
  assert.match(answer.subarray(12).toString(), /good \/early\n$/);
  assert.deepEqual(w.decisions, [{
    host: "good.test",
    port: w.good.port,
    allowed: true,
    reason: "allowed",
    address: "127.0.0.1",
  }]);
});

Deno.test("socks: names and addresses not allowed, rebinding, ports, BIND and UDP ASSOCIATE are refused", async () => {
  await using w = await world();
  const q = w.own.port;
  const cases: [number[], number, string, string][] = [
    [request("evil.test", w.good.port), 2, `evil.test:${w.good.port}`, "not in allow list"],
    [request("good.test", 22), 2, "good.test:22", "port 22 not allowed"],
    [request("rebind.test", q), 2, `rebind.test:${q}`, "resolves to 127.0.0.1, a loopback address"],
    [request([127, 0, 0, 1], q), 2, `127.0.0.1:${q}`, `port ${q} not allowed`],
    [request("127.0.0.1", q), 2, `127.0.0.1:${q}`, `port ${q} not allowed`],
    [request([...Array(15).fill(0), 1], q), 2, `[::1]:${q}`, "not in allow list"],
    [request("good.test", 443, 2), 7, "good.test:443", "SOCKS5 BIND is not offered, only CONNECT"],
    [
      request([0, 0, 0, 0], 0, 3),
      7,
      "0.0.0.0:0",
      "SOCKS5 UDP ASSOCIATE is not offered, only CONNECT",
    ],
  ];
  for (const [bytes, code, destination, reason] of cases) {
    w.decisions.length = 0;
    const { answer, closed } = await exchange(w.socket, [GREETING, bytes]);
    assert.ok(closed, destination);
    // The method reply, then a whole 10-byte reply with the refusal's code.
    assert.deepEqual([...answer.subarray(0, 2)], [5, 0], destination);
    assert.equal(answer.length, 12, `${destination}: ${[...answer]}`);
    assert.equal(answer[3], code, `${destination}: ${[...answer]}`);
    assert.deepEqual(
      w.decisions.map((d) => [`${d.host}:${d.port}`, d.allowed, d.reason.startsWith(reason)]),
      [[destination, false, true]],
      `${destination}: ${w.decisions[0]?.reason}`,
    );
  }
  assert.deepEqual(w.own.paths, [], "the user's loopback service was never reached");
});

Deno.test("socks: SOCKS4, HTTP, garbage and authentication-only greetings are cut at once", async () => {
  await using w = await world();
  const cases: [string, (number[] | string)[], number[]][] = [
    ["socks4", [[4, 1, 0, 80, 127, 0, 0, 1, 0]], []],
    ["http", ["CONNECT good.test:443 HTTP/1.1\r\n\r\n"], []],
    ["garbage", [[0xff, 0xfe, 0, 0]], []],
    ["no methods", [[5, 0]], []],
    // Username and password (2) only: "no acceptable methods".
    ["password only", [[5, 1, 2]], [5, 255]],
  ];
  for (const [name, parts, expected] of cases) {
    const { answer, closed, ms } = await exchange(w.socket, parts);
    assert.ok(closed, name);
    assert.deepEqual([...answer], expected, name);
    assert.ok(ms < 5_000, `${name}: cut after ${ms} ms`);
  }
  assert.deepEqual(w.decisions, []);
});

Deno.test("socks: a handshake that never ends is cut at its deadline, even dripped", async () => {
  await using w = await world({ handshakeMs: 500 });
  // A greeting that stops half-way.
  const stopped = await exchange(w.socket, [[5, 1]]);
  assert.ok(stopped.closed && stopped.ms < 10_000, `cut after ${stopped.ms} ms`);
  // A request sent one byte every 100 ms: never silent for long, still cut at the deadline.
  const bytes = [...GREETING, ...request("good.test", w.good.port)];
  const dripped = await exchange(w.socket, bytes.map((b) => [b]), 100);
  assert.ok(dripped.closed, "cut");
  assert.deepEqual([...dripped.answer], [5, 0], "only the method reply: no request was read");
  assert.deepEqual(w.decisions, []);
});

Deno.test("socks: a tunnel silent both ways is cut", async () => {
  await using w = await world({ idleMs: 300 });
  const { answer, closed, ms } = await exchange(w.socket, [
    GREETING,
    request("good.test", w.good.port),
  ]);
  assert.deepEqual([...answer.subarray(0, 4)], [5, 0, 5, 0]);
  assert.ok(closed && ms < 10_000, `cut after ${ms} ms`);
});
