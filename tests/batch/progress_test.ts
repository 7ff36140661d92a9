import assert from "node:assert/strict";
import { progressLine, summaryTable } from "../../src/batch/progress.ts";
import type { TaskResult } from "../../src/batch/results.ts";

Deno.test("the progress line: bar, done / running / pending / failed, tokens, ETA", () => {
  assert.equal(
    progressLine({ total: 20, done: 5, running: 4, failed: 1, tokens: 35200 }, 65),
    "[#####...............] 5/20 done, 4 running, 1 failed, 35.2k tokens, ETA 1m05s",
  );
  assert.equal(
    progressLine({ total: 4, done: 0, running: 1, pending: 3, failed: 0, tokens: 0 }),
    "[....................] 0/4 done, 1 running, 3 pending, 0 failed, 0 tokens",
  );
});

Deno.test("the summary table lists every task and totals by status, tokens and cost", () => {
  const base: TaskResult = {
    id: "a",
    index: 0,
    status: "passed",
    success: true,
    steps: 3,
    tokens: { input: 1000, output: 500, total: 1500 },
    cost: 0.0125,
    duration: 12.34,
    test_exit_code: 0,
    exit_code: 0,
    error: null,
    started_at: "",
    finished_at: "",
    runner: "local",
  };
  const failed = { ...base, id: "b", status: "timeout" as const, cost: null, error: "timed out" };
  const table = summaryTable([
    { id: "a", result: base },
    { id: "b", result: failed },
    { id: "c", state: "pending" },
    { id: "d" },
  ]);
  const lines = table.trimEnd().split("\n");
  assert.match(lines[0], /^task\s+status\s+steps\s+tokens\s+cost\s+time\s+test\s+error$/);
  assert.match(lines[1], /^a\s+passed\s+3\s+1\.5k\s+\$0\.0125\s+12\.3s\s+0$/);
  assert.match(lines[2], /^b\s+timeout\s+3\s+1\.5k\s+-\s+12\.3s\s+0\s+timed out$/);
  assert.match(lines[3], /^c\s+pending\s+-/);
  assert.match(lines[4], /^d\s+not run\s+-/);
  assert.equal(
    lines.at(-1),
    "4 tasks: 1 passed, 1 timeout, 1 pending, 1 not run; 3.0k tokens, $0.0125",
  );
});
