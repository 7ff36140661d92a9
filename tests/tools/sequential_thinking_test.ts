import assert from "node:assert/strict";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { SequentialThinkingTool } from "../../src/tools/sequential_thinking.ts";
import { TaskDoneTool } from "../../src/tools/task_done.ts";
import { testContext } from "../helpers/tools.ts";

function status(output: string | null): Record<string, unknown> {
  assert.ok(output?.startsWith("Sequential thinking step completed.\n\nStatus:\n"));
  return JSON.parse(output!.slice(output!.indexOf("{")));
}

const think = (executor: ToolExecutor, args: Record<string, unknown>) =>
  executor.executeToolCall({ name: "sequentialthinking", call_id: "t", arguments: args });

Deno.test("thoughts accumulate; revisions and branches are tracked", async () => {
  const executor = new ToolExecutor([new SequentialThinkingTool(testContext())]);
  const base = { next_thought_needed: true, total_thoughts: 3 };
  let s = status((await think(executor, { ...base, thought: "one", thought_number: 1 })).output);
  assert.deepEqual(s, {
    thought_number: 1,
    total_thoughts: 3,
    next_thought_needed: true,
    branches: [],
    thought_history_length: 1,
  });
  await think(executor, {
    ...base,
    thought: "rethink one",
    thought_number: 2,
    is_revision: true,
    revises_thought: 1,
  });
  s = status(
    (await think(executor, {
      ...base,
      thought: "alt",
      thought_number: 3,
      branch_from_thought: 1,
      branch_id: "alt-a",
    })).output,
  );
  assert.deepEqual(s.branches, ["alt-a"]);
  assert.equal(s.thought_history_length, 3);
});

Deno.test("a thought number past the total raises the total", async () => {
  const executor = new ToolExecutor([new SequentialThinkingTool(testContext())]);
  const result = await think(executor, {
    thought: "more",
    thought_number: 5,
    total_thoughts: 2,
    next_thought_needed: false,
  });
  assert.equal(status(result.output).total_thoughts, 5);
});

Deno.test("bad thoughts are refused with a reason, and do not enter the history", async () => {
  const executor = new ToolExecutor([new SequentialThinkingTool(testContext())]);
  const base = { thought: "x", next_thought_needed: true, total_thoughts: 2 };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ ...base, thought_number: 0 }, /thought_number must be at least 1/],
    [{ ...base, thought_number: 1, total_thoughts: 0 }, /total_thoughts must be at least 1/],
    [{ ...base, thought_number: 1.5 }, /`thought_number` must be an integer/],
    [{ ...base, thought_number: "1" }, /`thought_number` must be an integer/],
    [{ ...base, thought_number: 1, next_thought_needed: "yes" }, /must be a boolean/],
    [{ ...base, thought_number: 2, revises_thought: 0 }, /revises_thought must be a positive/],
    [{ ...base, thought_number: 2, revises_thought: 2 }, /must name an earlier thought/],
    [{ ...base, thought_number: 2, branch_from_thought: 1 }, /branch_id is required/],
    [{ ...base, thought: "  ", thought_number: 1 }, /thought must not be empty/],
    [{ thought_number: 1, total_thoughts: 1 }, /missing required argument `thought`/],
  ];
  for (const [args, expected] of cases) {
    const result = await think(executor, args);
    assert.equal(result.success, false, JSON.stringify(args));
    assert.match(result.error!, expected);
  }
  const ok = await think(executor, { ...base, thought_number: 1 });
  assert.equal(status(ok.output).thought_history_length, 1);
});

Deno.test("only the four core parameters are required", () => {
  const tool = new SequentialThinkingTool(testContext());
  assert.deepEqual(tool.jsonDefinition("anthropic").parameters.required, [
    "thought",
    "next_thought_needed",
    "thought_number",
    "total_thoughts",
  ]);
});

Deno.test("task_done takes no parameters and answers Task done.", async () => {
  const executor = new ToolExecutor([new TaskDoneTool(testContext())]);
  const result = await executor.executeToolCall({ name: "task_done", call_id: "d", arguments: {} });
  assert.equal(result.output, "Task done.");
  assert.equal(result.success, true);
  assert.deepEqual(new TaskDoneTool(testContext()).jsonDefinition("anthropic").parameters, {
    type: "object",
    properties: {},
    required: [],
  });
});
