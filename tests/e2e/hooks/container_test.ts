/**
 * Hooks in a container session, against real Docker (a private daemon the test starts): they run
 * on the host, where the user's programs are, in the folder Deft was started in, told the
 * container (`DEFT_CONTAINER`, `DEFT_CONTAINER_RUNTIME`, `DEFT_CONTAINER_WORKSPACE`, and
 * `deft_container` in their input) so one can `docker exec` into it; a repository's config still
 * adds no hook until its folder is trusted.
 */
import assert from "node:assert/strict";
import { runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { testRuntime } from "../../helpers/containers.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

const PEEK = `#!/bin/bash
cat > "$HOME/input.json"
pwd > "$HOME/pwd.txt"
"$DEFT_CONTAINER_RUNTIME" exec "$DEFT_CONTAINER" cat "$DEFT_CONTAINER_WORKSPACE/made.txt" \\
  > "$HOME/seen.txt" 2>&1
`;

Deno.test({
  name:
    "container (docker): hooks run on the host, told the container, and reach it with docker exec",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("docker");
  const home = await trustedHomeWith(
    "deft-hooks-ctr-",
    (home) =>
      `hooks:\n  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash ${home}/peek.sh", sandbox: none }\n`,
    { "peek.sh": PEEK },
  );
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo made-inside > /testbed/made.txt" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runMocked(mock, "make it", "/testbed", {
      cwd: home,
      env: { ...rt.env, HOME: home },
      extra: ["--docker-image", rt.image, "--container-runtime", "docker"],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await Deno.readTextFile(`${home}/seen.txt`)).trim(), "made-inside");
    assert.equal((await Deno.readTextFile(`${home}/pwd.txt`)).trim(), await Deno.realPath(home));
    const input = JSON.parse(await Deno.readTextFile(`${home}/input.json`));
    assert.equal(input.deft_container.runtime, "docker");
    assert.equal(input.deft_container.workspace, "/testbed");
    assert.ok(input.deft_container.id.length >= 12);
    assert.equal(input.tool_input.command, "echo made-inside > /testbed/made.txt");
    await assert.rejects(Deno.stat(`${home}/made.txt`), "the tool ran on the host");
  } finally {
    await mock.close();
  }

  // An untrusted folder's deft.yaml (where Deft starts) adds no hook to a container session.
  await using untrusted = await tempDir();
  const marker = `${untrusted.path}/hook-ran`;
  await Deno.writeTextFile(
    `${untrusted.path}/deft.yaml`,
    `hooks:\n  PreToolUse:\n    - hooks:\n        - { type: command, command: "touch ${marker}" }\n`,
  );
  const again = MockLLM.start([
    chatToolCalls([["bash", { command: "echo hi" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runMocked(again, "again", "/testbed", {
      cwd: untrusted.path,
      env: { ...rt.env, HOME: home },
      extra: ["--docker-image", rt.image, "--container-runtime", "docker"],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /hooks/);
    await assert.rejects(Deno.stat(marker), "an untrusted repository's hook ran");
  } finally {
    await again.close();
  }
});
