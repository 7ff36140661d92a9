/**
 * The one-file bundle hosts the tools inside a container too: only the bundle file and the Deno
 * binary are bound (no source tree, no package cache), and the tools, the persistent shell and
 * the patch from inside work as from source. Podman (no daemon to start); a runtime that cannot
 * start fails the test.
 */
import assert from "node:assert/strict";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { mockRunArgs, REPO_ROOT } from "../../helpers/deft.ts";
import { BUNDLE_FULL_FLAGS } from "../../helpers/deno_flags.ts";
import { tempDir } from "../../helpers/temp.ts";
import { testRuntime } from "../../helpers/containers.ts";

Deno.test({
  name: "container (podman): the bundle alone hosts the tools inside",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using rt = await testRuntime("podman");
  await using tmp = await tempDir("deft-bundle-");
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "scripts/bundle.ts", `${tmp.path}/deft.js`],
    cwd: REPO_ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(built.success, new TextDecoder().decode(built.stderr));
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "export X=kept; ls /opt/deft" }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: "/testbed/calc.py",
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatToolCalls([["bash", { command: "echo $X; python3 test_calc.py" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const args = mockRunArgs(mock, "t", "/testbed", {
      extra: [
        "--docker-image",
        rt.image,
        "--container-runtime",
        "podman",
        "-t",
        `${tmp.path}/t.json`,
        "--patch-path",
        `${tmp.path}/fix.patch`,
      ],
    });
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...BUNDLE_FULL_FLAGS, `${tmp.path}/deft.js`, ...args],
      cwd: tmp.path,
      env: { NO_COLOR: "1", ...rt.env },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const data = JSON.parse(await Deno.readTextFile(`${tmp.path}/t.json`));
    // deno-lint-ignore no-explicit-any
    const results = data.agent_steps.flatMap((s: any) => s.tool_results ?? []);
    // Only Deno and the bundle are bound (deno-dir is Deno's own cache, made inside).
    assert.equal(results[0].result, "deft.js\ndeno\ndeno-dir\n");
    assert.ok(results[1].success, results[1].error);
    assert.equal(results[2].result, "kept\nok\n");
    const patch = await Deno.readTextFile(`${tmp.path}/fix.patch`);
    assert.ok(patch.includes("+    return a + b\n"), patch);
    assert.deepEqual(await rt.deftContainers(), []);
  } finally {
    await mock.close();
  }
});
