import assert from "node:assert/strict";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";

/** `deno task demo` as a user's machine runs it: Python writes its bytecode cache. */
async function demo(): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = Deno.env.toObject();
  delete env.PYTHONDONTWRITEBYTECODE;
  delete env.PYTHONPYCACHEPREFIX;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "demo"],
    cwd: REPO_ROOT,
    env: { ...env, NO_COLOR: "1", DENO_DIR: denoDir() },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("README's first command: the demo fixes the bug with the recorded model", async () => {
  const { code, stdout, stderr } = await demo();
  assert.equal(code, 0, stderr);
  assert.ok(stdout.includes("-    return a - b\n+    return a + b"), stdout);
  assert.match(stderr, /replay: every tool result matches the recording/);
  assert.match(stderr, /\[2\] bash .* → failed \(exit 1\)/);
});

Deno.test("the demo passes 10 warm runs in a row with Python's bytecode cache on", async () => {
  // The check runs, the edit follows within the same second with the same size, the check runs
  // again: the edit's new mtime is what keeps the second check off the stale bytecode.
  for (let run = 1; run <= 10; run++) {
    const { code, stderr } = await demo();
    assert.equal(code, 0, `run ${run}:\n${stderr}`);
    assert.match(stderr, /replay: every tool result matches the recording/, `run ${run}`);
  }
});
