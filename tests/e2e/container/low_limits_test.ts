/**
 * A Podman session started by a Deft that runs under a low hard limit on processes (a CI runner,
 * a container, a login with `ulimit -Hu 1000`): Deft asks Podman for no more than it has, so the
 * container starts. Asking for 4096 there failed every start with "error setting rlimit type 6:
 * operation not permitted".
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { denoDir, mockRunArgs, REPO_ROOT } from "../../helpers/deft.ts";
import { testRuntime } from "../../helpers/containers.ts";

Deno.test({
  name: "container (podman): a Deft under `ulimit -Hu 1000` still starts its container",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "cat /proc/self/limits | grep 'Max processes'" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const args = mockRunArgs(mock, "look", "/testbed", {
      extra: ["--docker-image", rt.image, "--container-runtime", rt.name, "--json"],
    });
    const out = await new Deno.Command("prlimit", {
      args: [
        "--nproc=1000:1000",
        "--",
        Deno.execPath(),
        "run",
        ...deftFlags(),
        `${REPO_ROOT}main.ts`,
        ...args,
      ],
      env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...rt.env },
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.doesNotMatch(stderr, /error setting rlimit/);
    assert.equal(out.code, 0, stderr);
    // The bash call ran inside, under the limit Deft could give.
    const toolOutput = mock.requests.map((r) => JSON.stringify(r.body)).join("\n");
    assert.match(toolOutput, /Max processes +1000 +1000/);
  } finally {
    await mock.close();
  }
});
