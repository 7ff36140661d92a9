/**
 * `deft run` treats SIGTERM like Ctrl-C: the running command and everything it started end, the
 * trajectory is kept (marked unsuccessful), and the exit code is 143.
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, mockRunArgs, REPO_ROOT, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";

Deno.test("deft run: SIGTERM stops the run, ends its processes and keeps the trajectory", async () => {
  const home = await trustedHome();
  const unique = `${Date.now() % 1_000_000}`;
  const command = `setsid env -i sleep 4001.${unique} & sleep 4002.${unique}`;
  const mock = MockLLM.start([], () => chatToolCalls([["bash", { command }]]));
  const traj = `${home}/t.json`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      ...mockRunArgs(mock, "wait a while", home, {
        model: "mock",
        apiKey: null,
        extra: ["-t", traj],
      }),
    ],
    cwd: home,
    env: { HOME: home, NO_COLOR: "1", DENO_DIR: denoDir() },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    assert.ok(
      await eventually(async () => (await pidsByCmdline(`.${unique}`)).length === 2, 30_000),
      "the command started",
    );
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 143, stderr);
    assert.match(stderr, /interrupted/);
    assert.ok(
      await eventually(async () => (await pidsByCmdline(unique)).length === 0, 10_000),
      `left behind: ${await pidsByCmdline(unique)}`,
    );
    const trajectory = JSON.parse(await Deno.readTextFile(traj));
    assert.equal(trajectory.success, false);
    assert.ok(trajectory.llm_interactions.length >= 1, "the model call is recorded");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await mock.close();
    await Deno.remove(home, { recursive: true });
  }
});
