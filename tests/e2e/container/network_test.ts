/**
 * A container session under a network list, against real Docker (a private daemon) and real
 * Podman: the container has no network but Deft's proxy socket and the forwarder inside, so the
 * model's python3 reaches the test's allowed server on the host's loopback (named `localhost`,
 * which the proxy resolves itself through the hosts file), a host not in the list and a denied
 * one fail with Deft's reason, and a client that skips the proxy variables has no route.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { testRuntime } from "../../helpers/containers.ts";

/** A server on 127.0.0.1 that answers `NAME PATH` and records every path it was asked. */
async function server(name: string) {
  const paths: string[] = [];
  const srv = http.createServer((req, res) => {
    paths.push(req.url ?? "");
    res.end(`${name} ${req.url}\n`);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  return { port, paths, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

/** Python inside: each URL through the proxy variables, then one that ignores them. */
function script(allowed: number, other: number): string {
  return `
import urllib.request, urllib.error
def get(url, opener=urllib.request.build_opener()):
    try:
        print(url, "->", opener.open(url, timeout=20).read().decode().strip())
    except urllib.error.HTTPError as e:
        print(url, "->", e.code, e.read().decode().strip())
    except Exception as e:
        print(url, "-> failed:", type(e).__name__)
get("http://localhost:${allowed}/ok")
get("http://localhost:${other}/private")
get("http://bad.test:${allowed}/denied")
get("http://elsewhere.test/x")
get("http://127.0.0.1:${allowed}/direct", urllib.request.build_opener(urllib.request.ProxyHandler({})))
`;
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container network (${runtime}): the list applies inside, with Deft's reasons`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async () => {
    await using rt = await testRuntime(runtime);
    const good = await server("good");
    const own = await server("private");
    const home = await trustedHome("deft-cnet-");
    const config = `${home}/.config/deft/config.yaml`;
    await Deno.writeTextFile(
      config,
      (await Deno.readTextFile(config)) +
        `network:\n  allow: ["localhost:${good.port}", "127.0.0.1:${good.port}"]\n` +
        `  deny: [{ host: "bad.test", reason: "the test denies it" }]\n`,
    );
    const mock = MockLLM.start([
      chatToolCalls([["bash", {
        command: `python3 - <<'EOF'\n${script(good.port, own.port)}\nEOF`,
      }]]),
      chatToolCalls([["task_done", {}]]),
    ]);
    try {
      const run = await runMocked(mock, "fetch", "/testbed", {
        cwd: home,
        env: { ...rt.env, HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
        extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "--approval", "never"],
      });
      assert.equal(run.code, 0, run.stderr);
      const messages = mock.requests[1].body.messages as { role: string; content: string }[];
      const said = messages.filter((m) => m.role === "tool").map((m) => m.content).join("\n");
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
      assert.match(
        run.stderr,
        /network: blocked elsewhere\.test:80 \(not in allow list\)/,
      );
      assert.deepEqual(await rt.deftContainers(), [], "the container is gone");
    } finally {
      await mock.close();
      await good.close();
      await own.close();
    }
  });
}
