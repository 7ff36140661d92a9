/**
 * A bash call that runs out of time inside a container leaves no process behind there: neither
 * a command past its `timeout` (interrupted, then killed), nor what a tool host left running
 * when a call past its deadline made Deft replace it (the host knows only the `exec` client's
 * pid; the relay inside ends its process groups, and the session's watchdog what left them).
 * Against real Docker (a private daemon) and real Podman, on the cached test image (which has no
 * `ps`: processes are read from /proc).
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { runMocked } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

// The sleeps these tests start, as /proc shows their command lines (the pattern matches none of
// its own: a `[` follows `100` there).
const PATTERN = "sleep.100[0-9]";
const LIST = `grep -al '${PATTERN}' /proc/[0-9]*/cmdline | while read -r f; do ` +
  `tr '\\0' ' ' < "$f"; echo; done; echo listed`;

/** `deft run` in a container of the test image; the tool results the model was sent, in order. */
async function run(rt: TestRuntime, calls: [string, unknown][][], extra: string[] = []) {
  const mock = MockLLM.start([
    ...calls.map((c) => chatToolCalls(c)),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const done = await runMocked(mock, "t", "/testbed", {
      extra: ["--docker-image", rt.image, "--container-runtime", rt.name, ...extra],
      env: rt.env,
    });
    // deno-lint-ignore no-explicit-any
    const results = mock.requests.slice(1).map((r: any) => String(r.body.messages.at(-1).content));
    return { ...done, results };
  } finally {
    await mock.close();
  }
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `container (${runtime}): a timed-out call's processes end inside`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);

    await t.step(
      "a command past its timeout: interrupted, or killed when it ignores that",
      async () => {
        const done = await run(rt, [
          [["bash", { command: "sleep 1002", timeout: 1 }]],
          [["bash", { command: "bash -c 'trap \"\" INT; sleep 1004'", timeout: 1 }]],
          [["bash", { command: LIST }]],
        ]);
        assert.equal(done.code, 0, done.stderr);
        assert.match(done.results[0], /timed out after 1 s/);
        assert.match(done.results[1], /timed out after 1 s/);
        assert.equal(done.results[2], "listed\n", "a timed-out command still runs inside");
      },
    );

    await t.step(
      "a call past its deadline: nothing the replaced tool host started is left",
      async () => {
        await using dir = await tempDir();
        // The code graph's call gets a deadline it cannot meet, so the tool host is replaced.
        const config = `${dir.path}/config.yaml`;
        await Deno.writeTextFile(
          config,
          [
            "model_providers: { mock: { provider: openai_compatible } }",
            "models: { main: { model_provider: mock, model: mock-model } }",
            "agents: { deft_agent: { model: main, tools: [bash, ckg, task_done] } }",
            "tool_settings: { deadlines: { ckg: 0.01 } }",
          ].join("\n") + "\n",
        );
        // Waits up to 5 s for the sleeps to go (a setsid one is the watchdog's, which polls).
        const gone = `for i in $(seq 20); do grep -qal '${PATTERN}' /proc/[0-9]*/cmdline || ` +
          `break; sleep 0.25; done; ${LIST}`;
        const done = await run(rt, [
          [["bash", {
            command:
              "sleep 1001 & (sleep 1005; true) & setsid sleep 1003 & sleep 0.2; echo started",
          }]],
          [["bash", { command: LIST }]],
          [["ckg", { command: "search_function", path: "/testbed", identifier: "add" }]],
          [["bash", { command: gone }]],
        ], ["--config-file", config]);
        assert.equal(done.code, 0, done.stderr);
        assert.equal(done.results[0], "started\n");
        // They ran, in the background, between calls.
        for (const n of ["1001", "1003", "1005"]) {
          assert.ok(done.results[1].includes(`sleep ${n}`), done.results[1]);
        }
        assert.match(done.results[2], /did not finish within its deadline/);
        assert.equal(done.results[3], "listed\n", "the old tool host's processes live on");
      },
    );
  });
}
