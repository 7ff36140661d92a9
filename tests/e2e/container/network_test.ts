/**
 * A container session under a network list, against real Docker (a private daemon) and real
 * Podman: the container has no network but Deft's proxy socket and the forwarder inside, so the
 * model's python3 reaches the test's allowed server on the host's loopback (named `localhost`,
 * which the proxy resolves itself through the hosts file), a host not in the list and a denied
 * one fail with Deft's reason, and a client that skips the proxy variables has no route.
 */
import assert from "node:assert/strict";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loopbackServer as server, proxyProbe } from "../../helpers/loopback.ts";

/**
 * One `deft run` in a container of `rt` (the flags in `where`), its model running `command` (by
 * default the proxy probe).
 */
async function session(
  rt: TestRuntime,
  where: string[],
  workspace: string,
  ports: { good: number; own: number },
  command?: string,
) {
  const home = await trustedHomeWith(
    "deft-cnet-",
    () =>
      `network:\n  allow: ["localhost:${ports.good}", "127.0.0.1:${ports.good}"]\n` +
      `  deny: [{ host: "bad.test", reason: "the test denies it" }]\n`,
  );
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: command ?? `id -un; python3 - <<'EOF'\n${
        proxyProbe(ports.good, ports.own, [
          `http://bad.test:${ports.good}/denied`,
          "http://elsewhere.test/x",
        ])
      }\nEOF`,
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const run = await runMocked(mock, "fetch", workspace, {
      cwd: home,
      env: { ...rt.env, HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: [...where, "--container-runtime", rt.name, "--approval", "never"],
    });
    const messages = (mock.requests[1]?.body.messages ?? []) as { role: string; content: string }[];
    const said = messages.filter((m) => m.role === "tool").map((m) => m.content).join("\n");
    return { ...run, said };
  } finally {
    await mock.close();
  }
}

/**
 * Python for inside the container: `SOCKS_PROXY`, then a SOCKS5 CONNECT on 127.0.0.1:1080 (plain
 * sockets: the image has no SOCKS client) to each `host port`, and what came back.
 */
function socksProbe(targets: [string, number][]): string {
  return `
import os, socket
print("SOCKS_PROXY", os.environ.get("SOCKS_PROXY"))
def socks(host, port):
    s = socket.create_connection(("127.0.0.1", 1080), timeout=20)
    name = host.encode()
    s.sendall(bytes([5, 1, 0, 5, 1, 0, 3, len(name)]) + name + port.to_bytes(2, "big"))
    got = b""
    while len(got) < 12:
        chunk = s.recv(100)
        if not chunk: break
        got += chunk
    if got[:4] != bytes([5, 0, 5, 0]):
        print(host, port, "refused", got[3] if len(got) > 3 else None); return
    s.sendall(("GET /socks HTTP/1.0\\r\\nHost: %s\\r\\n\\r\\n" % host).encode())
    body = got[12:]
    while True:
        chunk = s.recv(1000)
        if not chunk: break
        body += chunk
    print(host, port, "->", body.decode().split("\\r\\n\\r\\n", 1)[1].strip())
${targets.map(([host, port]) => `socks("${host}", ${port})\n`).join("")}`;
}

/** The model's view and the console of a session under the list, as the list says. */
function checkSession(
  run: { code: number; stderr: string; said: string },
  good: { port: number; paths: string[] },
  own: { port: number; paths: string[] },
) {
  const { said } = run;
  assert.equal(run.code, 0, run.stderr);
  const g = good.port;
  assert.ok(said.includes(`http://localhost:${g}/ok -> good /ok`), said);
  assert.ok(
    said.includes(
      `http://localhost:${own.port}/private -> 403 Blocked by Deft: localhost:${own.port} ` +
        `port ${own.port} not allowed`,
    ),
    said,
  );
  assert.ok(
    said.includes(
      `http://bad.test:${g}/denied -> 403 Blocked by Deft: bad.test:${g} denied by ` +
        '"bad.test": the test denies it',
    ),
    said,
  );
  assert.ok(
    said.includes(
      "http://elsewhere.test/x -> 403 Blocked by Deft: elsewhere.test:80 not in allow list",
    ),
    said,
  );
  // Past the proxy there is nothing: the container's own loopback, no route out.
  assert.match(said, new RegExp(`http://127\\.0\\.0\\.1:${g}/direct -> failed: URLError`));
  assert.deepEqual(good.paths, ["/ok"]);
  assert.deepEqual(own.paths, []);
  assert.match(run.stderr, new RegExp(`network: allowed localhost:${g}\\b`));
  assert.match(run.stderr, /network: blocked elsewhere\.test:80 \(not in allow list\)/);
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container network (${runtime}): the list applies inside, with Deft's reasons`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await t.step("as the image's root", async () => {
      const good = await server("good");
      const own = await server("private");
      try {
        const run = await session(rt, ["--docker-image", rt.image], "/testbed", {
          good: good.port,
          own: own.port,
        });
        assert.match(run.said, /^root$/m);
        checkSession(run, good, own);
      } finally {
        await good.close();
        await own.close();
      }
    });
    await t.step("as an image's user that is not root (another id on the host)", async () => {
      await using ctx = await tempDir();
      await Deno.writeTextFile(
        `${ctx.path}/Dockerfile`,
        `FROM ${rt.image}\nRUN mkdir /ws && chown 65534:65534 /ws\nUSER 65534:65534\n`,
      );
      const good = await server("good");
      const own = await server("private");
      try {
        const run = await session(rt, ["--dockerfile-path", `${ctx.path}/Dockerfile`], "/ws", {
          good: good.port,
          own: own.port,
        });
        assert.match(run.said, /^nobody$/m);
        checkSession(run, good, own);
      } finally {
        await good.close();
        await own.close();
      }
    });
    await t.step("SOCKS5 on the container's 127.0.0.1:1080: the same list", async () => {
      const good = await server("good");
      const own = await server("private");
      try {
        const g = good.port;
        const probe = socksProbe([["localhost", g], ["elsewhere.test", 80], [
          "localhost",
          own.port,
        ]]);
        const run = await session(rt, ["--docker-image", rt.image], "/testbed", {
          good: g,
          own: own.port,
        }, `python3 - <<'EOF'\n${probe}\nEOF`);
        assert.equal(run.code, 0, run.stderr);
        assert.ok(run.said.includes("SOCKS_PROXY socks5h://127.0.0.1:1080"), run.said);
        assert.ok(run.said.includes(`localhost ${g} -> good /socks`), run.said);
        // Reply 2: connection not allowed by ruleset.
        assert.ok(run.said.includes("elsewhere.test 80 refused 2"), run.said);
        assert.ok(run.said.includes(`localhost ${own.port} refused 2`), run.said);
        assert.deepEqual(good.paths, ["/socks"]);
        assert.deepEqual(own.paths, []);
        assert.match(run.stderr, /network: blocked elsewhere\.test:80 \(not in allow list\)/);
      } finally {
        await good.close();
        await own.close();
      }
    });
    await t.step(
      "a running container named by --docker-container-id: not applied, said",
      async () => {
        const good = await server("good");
        const own = await server("private");
        let id: string | undefined;
        try {
          // A container an earlier session started under the list and kept: its forwarder
          // ended with that session, and Deft's proxy with that Deft.
          const kept = await session(
            rt,
            ["--docker-image", rt.image, "--docker-keep"],
            "/testbed",
            {
              good: good.port,
              own: own.port,
            },
          );
          assert.equal(kept.code, 0, kept.stderr);
          id = /container kept: ([0-9a-f]+)/.exec(kept.stderr)?.[1];
          assert.ok(id, kept.stderr);
          good.paths.length = 0;
          const run = await session(rt, ["--docker-container-id", id], "/testbed", {
            good: good.port,
            own: own.port,
          });
          assert.equal(run.code, 0, run.stderr);
          assert.match(
            run.stderr,
            /network: the network list \(network:\) is not applied in a container named by --docker-container-id/,
          );
          // No proxy, no variables: the container's own network (none) is all there is.
          assert.match(
            run.said,
            new RegExp(`http://localhost:${good.port}/ok -> failed: URLError`),
          );
          assert.deepEqual(good.paths, []);
        } finally {
          if (id) await rt.cli("rm", "-f", id).catch(() => "");
          await good.close();
          await own.close();
        }
      },
    );
    assert.deepEqual(await rt.deftContainers(), [], "the containers are gone");
  });
}
