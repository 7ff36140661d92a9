import assert from "node:assert/strict";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";

Deno.test("README's first command: the demo fixes the bug with the recorded model", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "demo"],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1", DENO_DIR: denoDir() },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.ok(stdout.includes("-    return a - b\n+    return a + b"), stdout);
  assert.match(stderr, /replay: every tool result matches the recording/);
  assert.match(stderr, /\[2\] bash .* → failed \(exit 1\)/);
});
