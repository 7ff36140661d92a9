import assert from "node:assert/strict";
import { readTrajectory, TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { emptyUsage } from "../../src/llm/types.ts";

const response = (content: string) => ({
  content,
  tool_calls: [],
  usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 2 },
  finish_reason: "stop",
  model: "m",
});

Deno.test("the file holds the last completed step after each write, atomically", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/nested/t.json`;
  const rec = new TrajectoryRecorder(path, { task: "t", provider: "p", model: "m", max_steps: 3 });
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [],
    response: response("a"),
    tools_available: [],
  });
  let onDisk = await readTrajectory(path);
  assert.equal(onDisk.llm_interactions.length, 1);
  assert.equal(onDisk.end_time, null);
  rec.recordStep({
    step_number: 1,
    state: "completed",
    llm_response: response("a"),
    tool_calls: [],
    tool_results: [],
    reflection: null,
    error: null,
  });
  onDisk = await readTrajectory(path);
  assert.equal(onDisk.agent_steps.length, 1);
  rec.finalize(true, "done");
  onDisk = await readTrajectory(path);
  assert.equal(onDisk.success, true);
  assert.equal(onDisk.total_usage.input_tokens, 10);
  assert.ok(onDisk.execution_time >= 0);
  // No temporary files are left beside it.
  assert.deepEqual([...Deno.readDirSync(`${dir}/nested`)].map((e) => e.name), ["t.json"]);
});

Deno.test("secrets never reach the file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/t.json`;
  const secret = "sk-live-abcdef123456";
  const rec = new TrajectoryRecorder(path, {
    task: `use ${secret}`,
    provider: "p",
    model: "m",
    max_steps: 1,
  }, [secret, undefined]);
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: secret }],
    response: response(secret),
    tools_available: [],
  });
  const text = await Deno.readTextFile(path);
  assert.ok(!text.includes(secret));
  assert.match(text, /\*\*\*/);
});
