/**
 * `deft batch` container tasks under a network list record their own network decisions in their
 * own trajectory (issue 53): two tasks run at once, each reaching one allowed server and one
 * host the list refuses, and each task's trajectory holds its destinations and none of the other
 * task's (each task's container has a proxy of its own in the batch's process). The batch's
 * stderr still shows each refusal. Real Docker (a private daemon), the test's own servers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { loopbackServer } from "../../helpers/loopback.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { recordedCall, recordedTrajectory } from "../../helpers/batch_fixture.ts";

/** A recording whose one step runs `command` in bash, then says it is done. */
function recording(command: string) {
  return recordedTrajectory("Fetch.", "/testbed", [recordedCall("bash", { command }, 1)], {
    maxSteps: 5,
  });
}

/** Python's urllib GET of each URL through the proxy variables (an error is printed, not raised). */
function fetches(urls: string[]): string {
  const program = [
    "import urllib.request",
    `for url in ${JSON.stringify(urls)}:`,
    "    try: print(url, urllib.request.urlopen(url, timeout=20).read().decode().strip())",
    "    except Exception as e: print(url, 'failed', e)",
  ].join("\n");
  // Twice, a second apart: the two tasks' connections interleave in time.
  return `python3 - <<'EOF'\n${program}\nEOF\nsleep 1\npython3 - <<'EOF'\n${program}\nEOF`;
}

Deno.test({
  name: "batch (docker): each container task's trajectory records its own network decisions",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("docker");
  await using dir = await tempDir("deft-batch-net-traj-");
  const first = await loopbackServer("first");
  const second = await loopbackServer("second");
  try {
    const config = join(dir.path, "config.yaml");
    await Deno.writeTextFile(
      config,
      `network:\n  allow: ["127.0.0.1:${first.port}", "127.0.0.1:${second.port}"]\n` +
        `  deny: [{ host: "nope.test", reason: "test says no" }]\n`,
    );
    const tasks = join(dir.path, "tasks.jsonl");
    const lines: string[] = [];
    for (const [id, port, denied] of [["one", first.port, 81], ["two", second.port, 82]]) {
      const command = fetches([
        `http://127.0.0.1:${port}/secret-${id}`,
        `http://nope.test:${denied}/`,
      ]);
      await Deno.writeTextFile(join(dir.path, `${id}.json`), JSON.stringify(recording(command)));
      lines.push(
        JSON.stringify({ id, image: rt.image, workdir: "/testbed", replay: `${id}.json` }),
      );
    }
    await Deno.writeTextFile(tasks, lines.join("\n") + "\n");
    const out = join(dir.path, "out");
    const run = await runDeft([
      "batch",
      tasks,
      "--out",
      out,
      "--config-file",
      config,
      "--container-runtime",
      "docker",
      "--concurrency",
      "2",
    ], { env: { ...rt.env, HOME: dir.path } });
    const pick = (r: Record<string, unknown>) => [r.host, r.port, r.allowed];
    for (const [id, port, denied] of [["one", first.port, 81], ["two", second.port, 82]]) {
      const text = await Deno.readTextFile(join(out, String(id), "trajectory.json"))
        .catch(() => "{}");
      const trajectory = JSON.parse(text);
      assert.ok(
        text.includes(`secret-${id} ${id === "one" ? "first" : "second"}`),
        run.stderr + text,
      );
      assert.deepEqual(
        (trajectory.network ?? []).map(pick),
        [
          ["127.0.0.1", port, true],
          ["nope.test", denied, false],
          ["127.0.0.1", port, true],
          ["nope.test", denied, false],
        ],
        `task ${id}'s trajectory holds its own decisions only\n${run.stderr}`,
      );
      assert.doesNotMatch(JSON.stringify(trajectory.network), /secret/, "never a path");
      assert.equal(
        await Deno.stat(join(out, String(id), "trajectory.json.journal")).then(() => 1, () => 0),
        0,
      );
    }
    assert.deepEqual(first.paths, ["/secret-one", "/secret-one"]);
    assert.deepEqual(second.paths, ["/secret-two", "/secret-two"]);
    assert.match(
      run.stderr,
      /network: blocked nope\.test:81 \(denied by "nope\.test": test says no\)/,
    );
    assert.match(
      run.stderr,
      /network: blocked nope\.test:82 \(denied by "nope\.test": test says no\)/,
    );
  } finally {
    await first.close();
    await second.close();
  }
});
