/**
 * A batch-wide budget: `deft batch --max-cost-usd` keeps one ledger in the output folder that
 * every task's run charges and checks before each model request. With a cap below one step's
 * cost, the first task stops after its first response and the second stops before its first
 * request: the mock model sees exactly one request in the whole batch.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runDeft } from "../../helpers/deft.ts";
import { makeBatchFixture } from "../../helpers/batch_fixture.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test({
  name: "batch budget: a two-task batch with a batch-wide cap stops the second task",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir("deft-batch-budget-");
    const home = await Deno.realPath(dir.path);
    const { tasks } = await makeBatchFixture(home, 2, () => "fix", () => ({
      replay: undefined,
      test: "true",
    }));
    const tasksFile = join(home, "tasks.jsonl");
    await Deno.writeTextFile(tasksFile, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n");
    const config = join(home, "prices.yaml");
    await Deno.writeTextFile(config, "prices:\n  mock-model: { input: 1.0, output: 2.0 }\n");
    // Each reply costs 100 input + 20 output tokens: $0.00014 at these prices.
    const mock = MockLLM.start(
      [],
      () => chatToolCalls([["bash", { command: "echo working" }]]),
    );
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
        "--config-file",
        config,
        "--max-cost-usd",
        "0.0001",
      ], {
        cwd: home,
        env: {
          HOME: home,
          XDG_CONFIG_HOME: join(home, ".config"),
          OPENAI_COMPATIBLE_API_KEY: "k",
        },
      });
      const logs = await Promise.all(
        tasks.map((t) => Deno.readTextFile(join(out, t.id, "deft.log")).catch(() => "")),
      );
      const why = `${run.stderr}\n${logs.join("\n")}`;
      assert.equal(mock.requests.length, 1, `one request in the whole batch\n${why}`);
      const results = await Promise.all(
        tasks.map(async (t) => JSON.parse(await Deno.readTextFile(join(out, t.id, "result.json")))),
      );
      for (const result of results) {
        assert.equal(result.exit_code, 3, why);
        assert.equal(result.success, false);
        assert.match(result.error, /Stopped at the batch's budget cap: \$0\.0001 spent/, why);
      }
      assert.equal(run.code, 3, why);
      const ledger = (await Deno.readTextFile(join(out, "budget.jsonl"))).trim().split("\n");
      assert.equal(ledger.length, 2, "the header and the first task's one charge");
      assert.deepEqual(JSON.parse(ledger[0]).caps, { max_cost_usd: 0.0001 });
    } finally {
      await mock.close();
    }
  },
});
