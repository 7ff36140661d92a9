/**
 * A batch task asks nobody: a call an ask rule is about is refused in the task's run (its exit
 * code 1 in result.json, the rule named in its trajectory), and `deft batch --approve-asks`
 * hands the user's word on to each task, whose call then runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

for (const approveAsks of [false, true]) {
  Deno.test({
    name: `batch${approveAsks ? " --approve-asks" : ""}: a task's call an ask rule is about is ${
      approveAsks ? "run" : "refused"
    }`,
    sanitizeResources: false,
    fn: async () => {
      await using dir = await tempDir("deft-batch-ask-");
      const home = await Deno.realPath(dir.path);
      await Deno.mkdir(join(home, ".config/deft"), { recursive: true });
      await Deno.writeTextFile(
        join(home, ".config/deft/config.yaml"),
        'approvals:\n  ask: ["$ touch"]\n',
      );
      const { tasks } = await makeBatchFixture(home, 1, () => "fix", () => ({
        replay: undefined,
        test: "true",
      }));
      const tasksFile = join(home, "tasks.jsonl");
      await Deno.writeTextFile(tasksFile, JSON.stringify(tasks[0]) + "\n");
      const mock = MockLLM.start([
        chatToolCalls([["bash", { command: "touch made-by-ask" }]]),
        chatToolCalls([["task_done", {}]]),
      ]);
      try {
        const out = join(home, "out");
        const run = await runDeft([
          "batch",
          tasksFile,
          "--out",
          out,
          "-p",
          "openai_compatible",
          "-m",
          "mock-model",
          "--model-base-url",
          `${mock.url}/v1`,
          ...(approveAsks ? ["--approve-asks"] : []),
        ], {
          cwd: home,
          env: {
            HOME: home,
            XDG_CONFIG_HOME: join(home, ".config"),
            OPENAI_COMPATIBLE_API_KEY: "k",
          },
        });
        const id = tasks[0].id;
        const log = await Deno.readTextFile(join(out, id, "deft.log")).catch(() => "");
        const result = JSON.parse(await Deno.readTextFile(join(out, id, "result.json")));
        const made = await Deno.stat(join(out, id, "workspace", "made-by-ask")).then(
          () => true,
          () => false,
        );
        assert.equal(made, approveAsks, `${run.stderr}\n${log}`);
        assert.equal(result.exit_code, approveAsks ? 0 : 1, `${run.stderr}\n${log}`);
        if (!approveAsks) assert.match(log, /the rule `ask \$ touch`.*nobody can be asked/, log);
      } finally {
        await mock.close();
      }
    },
  });
}
