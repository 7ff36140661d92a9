/**
 * The SOCKS5 side of the network list, enforced by the kernel: real bubblewrap, real curl
 * (`--socks5-hostname`, and `ALL_PROXY=socks5h://…` as the sandbox sets it) and python3's plain
 * sockets inside, launched through the policy's own builder (`taskTestLaunch`), with Deft's proxy
 * in this process and the test's own servers on loopback. Names resolve through the proxy's
 * injected resolver, which the test controls (no test needs the internet).
 */
import assert from "node:assert/strict";
import { processPolicy, runChild, taskTestLaunch } from "../../../../src/policy/process.ts";
import { type NetworkDecision, startNetworkProxy } from "../../../../src/policy/network/proxy.ts";
import { parseEntry } from "../../../../src/policy/network/rules.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { loopbackServer } from "../../../helpers/loopback.ts";

/** An allowed server, the user's own loopback service, the proxy, and a sandboxed shell. */
async function world() {
  const ws = await tempDir("deft-socks-ws-");
  const good = await loopbackServer("good");
  const own = await loopbackServer("private");
  const names: Record<string, string[]> = {
    "good.test": ["127.0.0.1"],
    "rebind.test": ["127.0.0.1"],
    "evil.test": ["127.0.0.1"],
    "bad.test": ["127.0.0.1"],
  };
  const decisions: NetworkDecision[] = [];
  const proxy = await startNetworkProxy({
    list: {
      allow: [
        `good.test:${good.port}`,
        // The allowed server's own address: a loopback address needs an entry of its own.
        `127.0.0.1:${good.port}`,
        // An allowed name that resolves to the user's loopback service (DNS rebinding).
        `rebind.test:${own.port}`,
        `bad.test:${good.port}`,
      ].map((e) => parseEntry(e)),
      deny: [parseEntry({ host: "bad.test", reason: "the test denies it" })],
    },
    resolve: (name) => {
      const found = names[name];
      return found ? Promise.resolve(found) : Promise.reject(new Error("no such name"));
    },
    onDecision: (d) => decisions.push(d),
  });
  const policy = processPolicy(ws.path, {
    sandbox: "workspace-write",
    networkProxy: proxy.socketPath,
  });
  const run = async (command: string) => {
    const out = await runChild(taskTestLaunch(policy, command, {}));
    return {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
  };
  return {
    good,
    own,
    decisions,
    run,
    async [Symbol.asyncDispose]() {
      await proxy.close();
      await good.close();
      await own.close();
      await ws.remove();
    },
  };
}

const SOCKS = "--socks5-hostname 127.0.0.1:1080";

Deno.test("socks: an allowed host works through --socks5-hostname and through SOCKS_PROXY", async () => {
  await using w = await world();
  const p = w.good.port;
  const out = await w.run([
    `curl -sS ${SOCKS} http://good.test:${p}/flag`,
    // SOCKS_PROXY names the SOCKS5 port (ALL_PROXY stays the HTTP proxy's, for its reasons).
    `curl -sS -v -x "$SOCKS_PROXY" http://good.test:${p}/all 2>/tmp/v; cat /tmp/v >&2`,
  ].join(" && "));
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, "good /flag\ngood /all\n");
  assert.match(
    out.stderr,
    new RegExp(`SOCKS5 connect to good\\.test:${p} \\(remotely resolved\\)`),
  );
  assert.deepEqual(
    w.decisions.map((d) => [d.host, d.port, d.allowed, d.address]),
    [["good.test", p, true, "127.0.0.1"], ["good.test", p, true, "127.0.0.1"]],
  );
});

Deno.test("socks: names not allowed or denied, IP literals, rebinding and other ports reach nothing", async () => {
  await using w = await world();
  const p = w.good.port;
  const q = w.own.port;
  const out = await w.run(
    [
      `http://evil.test:${p}/not-listed`,
      `http://bad.test:${p}/denied`,
      `http://127.0.0.1:${q}/literal`,
      `http://[::1]:${q}/v6`,
      `http://rebind.test:${q}/rebound`,
      `http://good.test:${q}/port`,
    ].map((url) => `curl -sS ${SOCKS} ${url} 2>&1; echo "rc=$?"`).join("; "),
  );
  assert.deepEqual(w.good.paths, [], "the allowed server got none of these");
  assert.deepEqual(w.own.paths, [], "the user's loopback service was never reached");
  // curl's own words for "connection not allowed by ruleset" (reply 2), six times.
  assert.equal(
    out.stdout.match(/curl: \(97\) Can't complete SOCKS5 connection to .*\(2\)\nrc=97/g)?.length,
    6,
    out.stdout,
  );
  assert.deepEqual(
    w.decisions.map((
      d,
    ) => [`${d.host}:${d.port}`, d.allowed, d.reason.split(" (")[0].split(";")[0]]),
    [
      [`evil.test:${p}`, false, "not in allow list"],
      [`bad.test:${p}`, false, 'denied by "bad.test": the test denies it'],
      [`127.0.0.1:${q}`, false, `port ${q} not allowed`],
      [`[::1]:${q}`, false, "not in allow list"],
      [`rebind.test:${q}`, false, "resolves to 127.0.0.1, a loopback address"],
      [`good.test:${q}`, false, `port ${q} not allowed`],
    ],
  );
});

Deno.test("socks: BIND and UDP ASSOCIATE are refused, a garbage greeting is cut", async () => {
  await using w = await world();
  const p = w.good.port;
  // Plain sockets to the SOCKS5 port inside the sandbox: what comes back, byte for byte.
  const py = [
    "import socket, time",
    "def talk(what, data):",
    "    s = socket.create_connection(('127.0.0.1', 1080), timeout=20); start = time.time()",
    "    s.sendall(data); got = b''",
    "    while True:",
    "        chunk = s.recv(100)",
    "        if not chunk: break",
    "        got += chunk",
    // Cut at once, not at the handshake's deadline (10 s).
    "    print(what, list(got), 'at once' if time.time() - start < 5 else 'late')",
    `port = (${p}).to_bytes(2, 'big')`,
    "name = b'good.test'",
    "talk('bind', bytes([5, 1, 0, 5, 2, 0, 3, len(name)]) + name + port)",
    "talk('udp', bytes([5, 1, 0, 5, 3, 0, 1, 0, 0, 0, 0, 0, 0]))",
    "talk('garbage', b'GET / HTTP/1.1\\r\\nHost: good.test\\r\\n\\r\\n')",
    "talk('socks4', bytes([4, 1]) + port + bytes([127, 0, 0, 1, 0]))",
  ].join("\n");
  const out = await w.run(`python3 -c "${py}"`);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(
    out.stdout,
    [
      // "no authentication", then a whole reply: 7, command not supported.
      "bind [5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0] at once",
      "udp [5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0] at once",
      "garbage [] at once",
      "socks4 [] at once",
      "",
    ].join("\n"),
  );
  assert.deepEqual(w.good.paths, []);
  assert.deepEqual(
    w.decisions.map((d) => [`${d.host}:${d.port}`, d.allowed, d.reason]),
    [
      [`good.test:${p}`, false, "SOCKS5 BIND is not offered, only CONNECT"],
      ["0.0.0.0:0", false, "SOCKS5 UDP ASSOCIATE is not offered, only CONNECT"],
    ],
  );
});
