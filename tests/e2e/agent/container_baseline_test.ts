/**
 * "This run's changes only" in a container: the start state is recorded inside, so a run attached
 * to a container whose /testbed is already dirty reports only its own edit.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { runMocked } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";

Deno.test({
  name: "container (podman): a dirty /testbed before the run: the patch is the run's edit only",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  await using dir = await tempDir();
  // Run 1 leaves a kept container with the user's work in progress in /testbed.
  const first = MockLLM.start([
    chatToolCalls([["bash", {
      command: "cd /testbed && echo '# mine' >> calc.py && echo draft > notes.txt && " +
        "git rev-parse HEAD > /tmp/head && git count-objects -v | sha1sum > /tmp/objects",
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  const kept = await runMocked(first, "dirty it", "/testbed", {
    extra: [
      "--docker-image",
      rt.image,
      "--container-runtime",
      rt.name,
      "--docker-keep",
      "--json",
    ],
    env: rt.env,
  }).finally(() => first.close());
  assert.equal(kept.code, 0, kept.stderr);
  const id = /container kept: ([0-9a-f]+)/.exec(kept.stderr)?.[1];
  assert.ok(id, kept.stderr);
  try {
    // Run 2 attaches and edits one other file.
    const second = MockLLM.start([
      chatToolCalls([["str_replace_based_edit_tool", {
        command: "create",
        path: "/testbed/added.py",
        file_text: "x = 1\n",
      }]]),
      chatToolCalls([["task_done", {}]]),
    ]);
    const patchPath = `${dir.path}/run.patch`;
    const run = await runMocked(second, "add a file", "/testbed", {
      extra: [
        "--docker-container-id",
        id,
        "--container-runtime",
        rt.name,
        "--patch-path",
        patchPath,
        "--json",
      ],
      env: rt.env,
    }).finally(() => second.close());
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout).files_changed, [
      { path: "added.py", added: 1, removed: 0 },
    ]);
    const patch = await Deno.readTextFile(patchPath);
    assert.deepEqual([...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]), [
      "added.py",
    ]);
    // The repository inside is as the user left it: same HEAD, same object count, no index change.
    const check = await rt.cli(
      "exec",
      id,
      "sh",
      "-c",
      'cd /testbed && test "$(git rev-parse HEAD)" = "$(cat /tmp/head)" && ' +
        "git count-objects -v | sha1sum | cmp -s - /tmp/objects && " +
        "git diff --cached --quiet && echo same",
    );
    assert.equal(check, "same");
  } finally {
    await rt.cli("rm", "-f", "-t", "0", id);
  }
});
