/**
 * `deft run` and `deft batch` end by printing the `deft report` command for what they recorded, and
 * that command makes the page from their real files.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";
import { tempDir } from "../../helpers/temp.ts";

function reportCommand(stderr: string): string[] {
  const match = /see it in a browser: deft report (\S+) -o deft-report\.html/.exec(stderr);
  assert.ok(match, `no report command in:\n${stderr}`);
  return ["report", match[1]];
}

Deno.test({
  name: "report: deft run ends with the report command, and it makes the run's page",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const workspace = join(dir.path, "ws");
    await Deno.mkdir(workspace);
    const mock = MockLLM.start([
      chatToolCalls([["task_done", {}]], "Nothing to change <b>here</b>."),
    ]);
    try {
      const trajectory = join(dir.path, "traj.json");
      const run = await runMocked(mock, "Say <hello>", workspace, {
        extra: ["-t", trajectory],
        env: { HOME: dir.path },
      });
      assert.equal(run.code, 0, run.stderr);
      const args = reportCommand(run.stderr);
      assert.deepEqual(args, ["report", trajectory]);
      const page = join(dir.path, "run.html");
      const made = await runDeft([...args, "-o", page], { env: { HOME: dir.path } });
      assert.equal(made.code, 0, made.stderr);
      const html = await Deno.readTextFile(page);
      assert.ok(html.includes("Say &lt;hello&gt;"));
      assert.ok(html.includes("Nothing to change &lt;b&gt;here&lt;/b&gt;."));
      assert.ok(html.includes('<span class="tool">task_done</span>'));
    } finally {
      await mock.close();
    }
  },
});

Deno.test({
  name: "report: deft batch ends with the report command, and it makes the batch's page",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const { tasksFile, tasks } = await makeBatchFixture(dir.path, 2);
    const out = join(dir.path, "out");
    const batch = await runDeft(["batch", tasksFile, "--out", out], { env: { HOME: dir.path } });
    assert.equal(batch.code, 0, batch.stderr);
    const args = reportCommand(batch.stderr);
    assert.deepEqual(args, ["report", out]);
    const page = join(dir.path, "batch.html");
    const made = await runDeft([...args, "-o", page]);
    assert.equal(made.code, 0, made.stderr);
    const html = await Deno.readTextFile(page);
    for (const t of tasks) assert.ok(html.includes(`>${t.id}</a>`), t.id);
    assert.equal(html.match(/<span class="badge s-passed">passed<\/span><\/td>/g)?.length, 2);
    // Each task's real patch is there, as a diff.
    assert.match(html, /<span class="add">\+/);
  },
});
