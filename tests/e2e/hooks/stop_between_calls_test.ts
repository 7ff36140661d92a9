/**
 * A hook's `continue: false` after the first of several calls in one step stops the run there:
 * the calls not yet started never run, and each is answered "Not run" with the hook's reason
 * (issue 53's loop gap: the loop once ran them all and stopped only after the step).
 */
import assert from "node:assert/strict";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

Deno.test("continue: false on PostToolUse of call 1 of 3: calls 2 and 3 never run, each answered", async () => {
  const stop =
    `#!/bin/bash\ncat >/dev/null\necho '{"continue":false,"stopReason":"quota reached"}'\n`;
  const home = await trustedHomeWith(
    "deft-hooks-stop-calls-",
    (home) =>
      `hooks:\n  PostToolUse:\n    - matcher: bash\n      hooks:\n` +
      `        - { type: command, command: "bash ${home}/stop.sh" }\n`,
    { "stop.sh": stop },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([
      ["bash", { command: "echo 1 > one.txt" }],
      ["bash", { command: "echo 2 > two.txt" }],
      ["bash", { command: "echo 3 > three.txt" }],
    ]),
  ]);
  try {
    const trajectoryPath = `${home}/t.json`;
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["-t", trajectoryPath, "--json"],
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(mock.requests.length, 1, "the model is not asked again");
    assert.ok(await Deno.stat(`${repo}/one.txt`), "the first call ran");
    for (const name of ["two.txt", "three.txt"]) {
      await assert.rejects(Deno.stat(`${repo}/${name}`), `${name}: its call came after the stop`);
    }
    assert.equal(JSON.parse(r.stdout).stopped_by_hook.reason, "quota reached");
    const trajectory = JSON.parse(await Deno.readTextFile(trajectoryPath));
    const step = trajectory.agent_steps.find((s: { tool_calls: unknown[] }) =>
      s.tool_calls?.length === 3
    );
    const errors = step.tool_results.map((t: { error: string | null }) => t.error ?? "");
    assert.doesNotMatch(errors[0], /Not run/);
    for (const error of errors.slice(1)) {
      assert.match(error, /^Not run: Stopped by PostToolUse hook .*quota reached/);
    }
    assert.equal(trajectory.hook_stop.reason, "quota reached");
  } finally {
    await mock.close();
  }
});
