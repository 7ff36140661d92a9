import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";

function lines(stdout: string): Record<string, unknown>[] {
  return stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
}

const think = (n: number) => ({
  thought: `t${n}`,
  thought_number: n,
  total_thoughts: 3,
  next_thought_needed: true,
});

Deno.test("serve answers each call with one line, in order, keeping tool state", async () => {
  const input = [
    { id: 1, name: "sequentialthinking", arguments: think(1) },
    { id: "two", name: "sequentialthinking", arguments: think(2) },
    { id: 3, name: "task_done" },
  ].map((c) => JSON.stringify(c)).join("\n") + "\n";
  const run = await runDeft(["serve"], { stdin: input });
  assert.equal(run.code, 0, run.stderr);
  const out = lines(run.stdout);
  assert.deepEqual(out.map((o) => o.id), [1, "two", 3]);
  assert.match(String(out[1].output), /"thought_history_length": 2/);
  assert.deepEqual(out[2], {
    id: 3,
    name: "task_done",
    success: true,
    output: "Task done.",
    error: null,
    error_code: 0,
  });
});

Deno.test("a batch line gets one result line per call, in input order", async () => {
  const batch = [
    { id: "a", name: "sequentialthinking", arguments: think(1) },
    { id: "b", name: "nope", arguments: {} },
    { id: "c", name: "task_done", arguments: {} },
  ];
  for (const flags of [[], ["--parallel"]]) {
    const run = await runDeft(["serve", ...flags], { stdin: JSON.stringify(batch) + "\n" });
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout);
    assert.deepEqual(out.map((o) => o.id), ["a", "b", "c"]);
    assert.deepEqual(out.map((o) => o.success), [true, false, true]);
  }
});

Deno.test("bad lines get error lines and the server goes on", async () => {
  const input = [
    "this is not json",
    "[]",
    '"a string"',
    '{"id": 7}',
    '{"id": 8, "name": "task_done", "arguments": [1]}',
    "",
    '[{"id": 9, "name": "task_done"}, 5]',
    '{"id": 10, "name": "task_done"}',
  ].join("\n"); // no final newline: the last line still counts
  const run = await runDeft(["serve"], { stdin: input });
  assert.equal(run.code, 0, run.stderr);
  const out = lines(run.stdout);
  assert.equal(out.length, 8);
  assert.match(String(out[0].error), /line 1 is not valid JSON/);
  assert.match(String(out[1].error), /line 2 is an empty batch/);
  assert.match(String(out[2].error), /call 3 must be a JSON object/);
  assert.deepEqual([out[3].id, out[3].success], [7, false]);
  assert.match(String(out[3].error), /needs a "name" string/);
  assert.match(String(out[4].error), /must be a JSON object/);
  assert.deepEqual([out[5].id, out[5].success], [9, true]);
  assert.match(String(out[6].error), /call 7\.1 must be a JSON object/);
  assert.deepEqual([out[7].id, out[7].output], [10, "Task done."]);
});

Deno.test("serve on empty input exits 0 with no output", async () => {
  const run = await runDeft(["serve"], { stdin: "" });
  assert.equal(run.code, 0);
  assert.equal(run.stdout, "");
});
