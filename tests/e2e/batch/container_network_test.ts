/**
 * `deft batch` task containers under a network list, against real Docker (a private daemon) and
 * real Podman: the batch starts each task's container with `--network none`, its own proxy's
 * socket bound in and the forwarder running (the container session's code path), and the task's
 * `deft run`, which attaches to it, gives the model's shell the proxy variables: an allowed host on
 * the host's
 * loopback answers, a host not in the list is refused with Deft's reason (said on the batch's
 * stderr), and a client that skips the proxy has no route.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loopbackServer as server, proxyProbe } from "../../helpers/loopback.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { recordedCall, recordedTrajectory } from "../../helpers/batch_fixture.ts";

/** A recording whose one step runs `command` in bash, then says it is done. */
function recording(command: string) {
  return recordedTrajectory("Fetch.", "/testbed", [recordedCall("bash", { command }, 1)], {
    maxSteps: 5,
  });
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `batch (${runtime}): a task's container gets the network list through the batch's proxy`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async () => {
    await using rt = await testRuntime(runtime);
    await using dir = await tempDir("deft-batch-net-");
    const good = await server("good");
    const own = await server("private");
    try {
      const config = join(dir.path, "config.yaml");
      await Deno.writeTextFile(
        config,
        `network:\n  allow: ["localhost:${good.port}", "127.0.0.1:${good.port}"]\n`,
      );
      const command = `python3 - <<'EOF'\n${proxyProbe(good.port, own.port)}\nEOF`;
      await Deno.writeTextFile(join(dir.path, "net.json"), JSON.stringify(recording(command)));
      const tasks = join(dir.path, "tasks.jsonl");
      await Deno.writeTextFile(
        tasks,
        JSON.stringify({ id: "net", image: rt.image, workdir: "/testbed", replay: "net.json" }) +
          "\n",
      );
      const out = join(dir.path, "out");
      const run = await runDeft([
        "batch",
        tasks,
        "--out",
        out,
        "--config-file",
        config,
        "--container-runtime",
        runtime,
      ], { env: { ...rt.env, HOME: dir.path } });
      const trajectory = await Deno.readTextFile(join(out, "net", "trajectory.json"))
        .catch(() => "");
      const said = JSON.stringify(JSON.parse(trajectory || "{}"));
      assert.ok(said.includes(`http://localhost:${good.port}/ok -> good /ok`), run.stderr + said);
      assert.ok(
        said.includes(
          `http://localhost:${own.port}/private -> 403 Blocked by Deft: localhost:${own.port} ` +
            `port ${own.port} not allowed`,
        ),
        said,
      );
      assert.match(
        said,
        new RegExp(`http://127\\.0\\.0\\.1:${good.port}/direct -> failed: URLError`),
      );
      assert.deepEqual(good.paths, ["/ok"]);
      assert.deepEqual(own.paths, []);
      assert.match(run.stderr, new RegExp(`network: blocked localhost:${own.port} \\(port`));
      assert.doesNotMatch(run.stderr, /is not applied in a container named by/);
    } finally {
      await good.close();
      await own.close();
    }
  });
}
