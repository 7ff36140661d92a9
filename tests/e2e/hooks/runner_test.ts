/**
 * Attacks on the hook runner (src/hooks/runner.ts) with hooks that misbehave: a hook that answers
 * and exits but leaves a background child holding its output pipe (in its process group, or in a
 * session of its own) must not keep Deft waiting until the hook's timeout.
 */
import assert from "node:assert/strict";
import { runHook } from "../../../src/hooks/runner.ts";
import { tempDir } from "../../helpers/temp.ts";

function isRunning(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

for (
  const [how, spawn] of [
    ["in its process group", "sleep 60 &"],
    ["in a session of its own (setsid)", "setsid sleep 60 &"],
  ] as const
) {
  Deno.test(`a hook that answers and exits, leaving a child ${how} holding its stdout, is done at once`, async () => {
    await using dir = await tempDir("deft-hook-");
    const pidFile = `${dir.path}/child.pid`;
    const command =
      `cat >/dev/null; echo '{"systemMessage":"hi"}'; ${spawn} echo $! > '${pidFile}'`;
    const started = performance.now();
    const run = await runHook({ type: "command", command, timeout: 20 }, {}, dir.path);
    const seconds = (performance.now() - started) / 1000;
    const pid = Number((await Deno.readTextFile(pidFile)).trim());
    try {
      assert.equal(run.code, 0, JSON.stringify(run));
      assert.equal(run.timedOut, false);
      assert.match(run.stdout, /"systemMessage":"hi"/);
      assert.ok(seconds < 5, `runHook took ${seconds.toFixed(1)} s for a hook that exited at once`);
    } finally {
      if (isRunning(pid)) Deno.kill(pid, "SIGKILL");
    }
  });
}
