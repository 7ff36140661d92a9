/**
 * The network list enforced by the kernel: real bubblewrap, real curl, git and python3 inside,
 * launched through the policy's own builder (`taskTestLaunch`, the model's shell's confinement),
 * with Deft's proxy in this process and the test's own servers on loopback. Names resolve through
 * the proxy's injected resolver, which the test controls (no test needs the internet).
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { processPolicy, runChild, taskTestLaunch } from "../../../../src/policy/process.ts";
import { type NetworkDecision, startNetworkProxy } from "../../../../src/policy/network/proxy.ts";
import { parseEntry } from "../../../../src/policy/network/rules.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { loopbackServer } from "../../../helpers/loopback.ts";

/**
 * A server on 127.0.0.1 that answers `NAME PATH` and records every path it was asked; with `root`,
 * it serves `/repo.git/…` from that folder (a dumb-HTTP git remote).
 */
function server(name: string, root?: string) {
  return loopbackServer(name, async (req, res) => {
    if (!root || !req.url?.startsWith("/repo.git/")) return false;
    try {
      const path = req.url.slice("/repo.git".length).split("?")[0];
      const file = await Deno.readFile(`${root}${path}`);
      res.end(file);
    } catch {
      res.writeHead(404).end();
    }
    return true;
  });
}

async function git(args: string[], cwd: string) {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

/** The world of one test: an allowed server, the user's own loopback service, the proxy. */
async function world() {
  const ws = await tempDir("deft-net-ws-");
  const repo = await tempDir("deft-net-repo-");
  await git(["init", "-q", "--bare", "-b", "main", repo.path], repo.path);
  const work = `${ws.path}/src`;
  await Deno.mkdir(work);
  await git(["init", "-q", "-b", "main", work], work);
  await Deno.writeTextFile(`${work}/README`, "served over http\n");
  await git(["add", "README"], work);
  await git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"], work);
  await git(["push", "-q", repo.path, "main"], work);
  await git(["update-server-info"], repo.path);
  await Deno.remove(work, { recursive: true });
  const good = await server("good", repo.path);
  const own = await server("private");
  const names: Record<string, string[]> = {
    "good.test": ["127.0.0.1"],
    "a.wild.test": ["127.0.0.1"],
    "bad.wild.test": ["127.0.0.1"],
    "rebind.test": ["127.0.0.1"],
    "evil.test": ["127.0.0.1"],
  };
  const decisions: NetworkDecision[] = [];
  const proxy = await startNetworkProxy({
    list: {
      allow: [
        "good.test:" + good.port,
        "*.wild.test:" + good.port,
        // The allowed server's own address: a loopback address needs an entry of its own.
        "127.0.0.1:" + good.port,
        // An allowed name that resolves to the user's loopback service (DNS rebinding).
        "rebind.test:" + own.port,
      ].map((e) => parseEntry(e)),
      deny: [parseEntry({ host: "bad.wild.test", reason: "the test denies it" })],
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
      await repo.remove();
    },
  };
}

Deno.test("network: an allowed host works for curl (HTTP and CONNECT), python3 and git", async () => {
  await using w = await world();
  const p = w.good.port;
  const out = await w.run([
    `curl -sS http://good.test:${p}/plain`,
    `curl -sS --proxytunnel http://good.test:${p}/tunnel`,
    `curl -sS --proxytunnel http://a.wild.test:${p}/wild`,
    `python3 -c "import urllib.request; print(urllib.request.urlopen('http://good.test:${p}/py').read().decode(), end='')"`,
    `git clone -q http://good.test:${p}/repo.git /tmp/clone && cat /tmp/clone/README`,
  ].join(" && "));
  assert.equal(out.code, 0, out.stderr);
  assert.equal(
    out.stdout,
    `good /plain\ngood /tunnel\ngood /wild\ngood /py\nserved over http\n`,
  );
  assert.ok(
    w.decisions.every((d) => d.allowed && d.host.endsWith("test") && d.port === p),
    JSON.stringify(w.decisions),
  );
});

Deno.test("network: a host not allowed or denied fails, with Deft's reason", async () => {
  await using w = await world();
  const p = w.good.port;
  const out = await w.run([
    `curl -sS http://evil.test:${p}/x; echo "rc=$?"`,
    `curl -sS -v --proxytunnel http://evil.test:${p}/y 2>&1 | grep -E '^< HTTP|^curl:'`,
    `curl -sS http://bad.wild.test:${p}/z`,
  ].join("; "));
  assert.match(
    out.stdout,
    new RegExp(`Blocked by Deft: evil\\.test:${p} not in allow list\\nrc=0`),
  );
  assert.match(
    out.stdout,
    new RegExp(`< HTTP/1.1 403 Blocked by Deft: evil\\.test:${p} not in allow list`),
  );
  assert.match(out.stdout, /curl: \(56\) CONNECT tunnel failed, response 403/);
  assert.match(
    out.stdout,
    /Blocked by Deft: bad\.wild\.test:\d+ denied by "bad\.wild\.test": the test denies it/,
  );
  assert.deepEqual(w.good.paths, [], "the server got none of these requests");
  assert.deepEqual(
    w.decisions.map((d) => [d.host, d.allowed, d.reason]),
    [
      ["evil.test", false, "not in allow list"],
      ["evil.test", false, "not in allow list"],
      ["bad.wild.test", false, 'denied by "bad.wild.test": the test denies it'],
    ],
  );
});

Deno.test("network: DNS rebinding, IP literals and CONNECT to a loopback port reach nothing", async () => {
  await using w = await world();
  const q = w.own.port;
  const out = await w.run(
    [
      // An allowed name that resolves to the user's own loopback service.
      `curl -sS http://rebind.test:${q}/rebound`,
      `curl -sS --proxytunnel http://rebind.test:${q}/rebound2`,
      // IP literals of the user's service, and IPv6 spellings of loopback.
      `curl -sS --proxytunnel http://127.0.0.1:${q}/literal`,
      `curl -sS http://[::1]:${q}/v6`,
      `curl -sS http://[::ffff:127.0.0.1]:${q}/mapped`,
      // An allowed name, at another (loopback) port.
      `curl -sS --proxytunnel http://good.test:${q}/port`,
    ].map((c) => `${c} 2>&1`).join("; "),
  );
  assert.deepEqual(w.own.paths, [], "the user's loopback service was never reached");
  assert.match(out.stdout, /rebind\.test:\d+ resolves to 127\.0\.0\.1, a loopback address/);
  assert.match(out.stdout, /Blocked by Deft: \[::1\]:\d+ not in allow list/);
  assert.match(out.stdout, /Blocked by Deft: \[::ffff:7f00:1\]:\d+ not in allow list/);
  const refusals = w.decisions.filter((d) => !d.allowed).map((d) => `${d.host}:${d.port}`);
  assert.deepEqual(refusals, [
    `rebind.test:${q}`,
    `rebind.test:${q}`,
    `127.0.0.1:${q}`,
    `[::1]:${q}`,
    `[::ffff:7f00:1]:${q}`,
    `good.test:${q}`,
  ]);
  assert.ok(w.decisions.at(-1)?.reason.startsWith(`port ${q} not allowed`));
});

Deno.test("network: without the proxy there is no route: NO_PROXY, direct clients, UDP, raw sockets", async () => {
  await using w = await world();
  const p = w.good.port;
  const received: string[] = [];
  const udp = dgram.createSocket("udp4");
  udp.on("message", (m) => received.push(m.toString()));
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", () => r()));
  const u = udp.address().port;
  try {
    const py = [
      "import socket",
      "def attempt(what, f):",
      "    try:",
      "        f(); print(what, 'ok')",
      "    except OSError as e:",
      "        print(what, 'failed', type(e).__name__)",
      "def tcp(host, port):",
      "    s = socket.socket(); s.settimeout(3); s.connect((host, port)); s.close()",
      "def udp(host, port):",
      "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', (host, port))",
      "attempt('tcp-host-loopback', lambda: tcp('127.0.0.1', " + p + "))",
      "attempt('tcp-outside', lambda: tcp('192.0.2.1', 80))",
      "attempt('udp-host-loopback', lambda: udp('127.0.0.1', " + u + "))",
      "attempt('udp-outside', lambda: udp('192.0.2.1', 53))",
      "attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))",
    ].join("\n");
    const out = await w.run([
      `NO_PROXY='*' no_proxy='*' curl -sS --max-time 5 http://good.test:${p}/no-proxy 2>&1; echo "rc=$?"`,
      `unset HTTP_PROXY http_proxy ALL_PROXY all_proxy; curl -sS --max-time 5 http://127.0.0.1:${p}/direct 2>&1; echo "rc=$?"`,
      `python3 -c "${py}"`,
    ].join("; "));
    assert.deepEqual(w.good.paths, [], "nothing reached the server but through the proxy");
    const lines = out.stdout.split("\n");
    assert.match(lines[0], /curl: \(6\) Could not resolve host: good\.test/);
    assert.match(lines[2], /curl: \(7\) Failed to connect to 127\.0\.0\.1/);
    assert.ok(out.stdout.includes("tcp-host-loopback failed ConnectionRefusedError"), out.stdout);
    assert.ok(out.stdout.includes("tcp-outside failed OSError"), out.stdout);
    assert.ok(out.stdout.includes("udp-outside failed OSError"), out.stdout);
    assert.ok(out.stdout.includes("raw failed PermissionError"), out.stdout);
    // A datagram to the sandbox's own loopback goes nowhere near the host's.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(received, [], "the host's UDP socket got nothing");
    assert.deepEqual(w.decisions, [], "the proxy was never asked");
  } finally {
    udp.close();
  }
});
