/**
 * `deft batch` with a model (not a replay): each task is a `deft run`, so the user's hooks run
 * in it — SessionStart (`startup`), PreToolUse on its calls, Stop, and SessionEnd once when the
 * task's run ends (`reason: other`, `deft_reason: completed`), each with the task's own session
 * id, trajectory and workspace.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft, trustedHomeWith } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";

/**
 * A hook that appends its stdin (one JSON object) as a line to $HOME/NAME.jsonl: a log in ~, so
 * it runs outside the sandbox (`sandbox: none` in its entry).
 */
const RECORD = `#!/bin/bash\ncat >> "$HOME/$1.jsonl"\necho >> "$HOME/$1.jsonl"\n`;

async function recorded(home: string, name: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${home}/${name}.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

Deno.test({
  name:
    "batch: a task run by a model runs the user's hooks, SessionEnd once per task with its own ids",
  sanitizeResources: false,
  fn: async () => {
    const mock = MockLLM.start([
      chatToolCalls([["bash", { command: "sed -i 's/a - b/a + b/' calc.py" }]]),
      chatToolCalls([["task_done", {}]]),
      chatToolCalls([["bash", { command: "sed -i 's/a - b/a + b/' calc.py" }]]),
      chatToolCalls([["task_done", {}]]),
    ]);
    const home = await trustedHomeWith("deft-hooks-batch-", (home) => {
      const hook = (name: string) =>
        `    - hooks:\n        - { type: command, command: "bash ${home}/record.sh ${name}", sandbox: none }\n`;
      return `model_providers:\n  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }\n` +
        `models:\n  m: { model_provider: m, model: mock, max_retries: 0 }\n` +
        `agents:\n  deft_agent: { model: m, max_steps: 5, tools: [bash, task_done] }\n` +
        `hooks:\n  SessionStart:\n${hook("start")}  PreToolUse:\n${hook("pre")}` +
        `  Stop:\n${hook("stop")}  SessionEnd:\n${hook("end")}`;
    }, { "record.sh": RECORD });
    try {
      const dir = join(home, "batch");
      // No replay: each task's `deft run` asks the model.
      const { tasksFile, tasks } = await makeBatchFixture(
        dir,
        2,
        () => "idle",
        () => ({ replay: undefined }),
      );
      const out = join(dir, "out");
      const r = await runDeft(
        ["batch", tasksFile, "--out", out, "--concurrency", "1", "--output-format", "json"],
        { cwd: home, env: { HOME: home } },
      );
      const summary = JSON.parse(r.stdout);
      assert.deepEqual(summary.counts, { passed: 2 }, r.stderr);
      assert.equal(mock.requests.length, 4, "the tasks did not ask the model");

      const ends = await recorded(home, "end");
      assert.equal(ends.length, 2, "SessionEnd did not run once per task");
      const starts = await recorded(home, "start");
      assert.deepEqual(starts.map((s) => s.source), ["startup", "startup"]);
      const pre = await recorded(home, "pre");
      assert.deepEqual(pre.map((p) => p.tool_name), ["bash", "task_done", "bash", "task_done"]);
      assert.equal((await recorded(home, "stop")).length, 2);
      const ids = new Set<unknown>();
      for (const task of tasks) {
        const trajectoryPath = join(out, task.id, "trajectory.json");
        const trajectory = JSON.parse(await Deno.readTextFile(trajectoryPath));
        const end = ends.find((e) => e.transcript_path === trajectoryPath);
        assert.ok(end, `no SessionEnd for ${task.id}: ${JSON.stringify(ends)}`);
        assert.equal(end.reason, "other");
        assert.equal(end.deft_reason, "completed");
        assert.equal(end.session_id, trajectory.session_id);
        assert.equal(end.cwd, join(out, task.id, "workspace"));
        ids.add(end.session_id);
      }
      assert.equal(ids.size, 2, "the tasks' SessionEnd hooks got the same session id");
    } finally {
      await mock.close();
    }
  },
});
