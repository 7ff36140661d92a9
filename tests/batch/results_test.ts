/**
 * results.jsonl lists each task's final outcome once: an interrupted task is not finished (it runs
 * again), so it is in its result.json but never in the shared list a user tallies.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  isFinished,
  predictionsFile,
  recordPrediction,
  recordResult,
  resultsFile,
  taskPaths,
  type TaskResult,
} from "../../src/batch/results.ts";
import { tempDir } from "../helpers/temp.ts";

function result(id: string, status: TaskResult["status"]): TaskResult {
  const now = new Date().toISOString();
  return {
    id,
    index: 0,
    status,
    success: status === "passed",
    steps: 1,
    tokens: null,
    cost: null,
    duration: 1,
    test_exit_code: null,
    exit_code: status === "interrupted" ? null : 0,
    error: null,
    started_at: now,
    finished_at: now,
    runner: "local",
  };
}

async function listed(out: string): Promise<TaskResult[]> {
  const text = await Deno.readTextFile(resultsFile(out)).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("results: an interrupted task is recorded in result.json but not listed in results.jsonl", async () => {
  await using tmp = await tempDir("deft-results-");
  const out = tmp.path;
  await Deno.mkdir(taskPaths(out, "t0").dir, { recursive: true });
  await Deno.mkdir(taskPaths(out, "t1").dir, { recursive: true });
  await recordResult(out, result("t0", "interrupted"));
  await recordResult(out, result("t1", "failed"));
  const saved = JSON.parse(await Deno.readTextFile(join(out, "t0", "result.json")));
  assert.equal(saved.status, "interrupted");
  assert.equal(isFinished(saved, false), false, "an interrupted task runs again");
  assert.deepEqual((await listed(out)).map((r) => [r.id, r.status]), [["t1", "failed"]]);
  // Its rerun's outcome is the one line for it.
  await recordResult(out, result("t0", "passed"));
  assert.deepEqual((await listed(out)).map((r) => [r.id, r.status]), [
    ["t1", "failed"],
    ["t0", "passed"],
  ]);
});

Deno.test("predictions.jsonl: SWE-bench's three fields, one whole line per finished task", async () => {
  await using tmp = await tempDir("deft-predictions-");
  const extra = { instance_id: "a__b-1", model_name_or_path: "m", model_patch: "", status: "x" };
  await recordPrediction(tmp.path, extra);
  const patch = 'diff --git a/x b/x\n+\u00e9 "quoted"\n';
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      recordPrediction(tmp.path, {
        instance_id: `a__b-${i + 2}`,
        model_name_or_path: "org/model",
        model_patch: patch.repeat(500),
      })),
  );
  const lines = (await Deno.readTextFile(predictionsFile(tmp.path))).trimEnd().split("\n");
  assert.equal(lines.length, 21);
  // Only the harness's fields: anything else a caller holds stays out.
  assert.deepEqual(JSON.parse(lines[0]), {
    instance_id: "a__b-1",
    model_name_or_path: "m",
    model_patch: "",
  });
  for (const line of lines.slice(1)) {
    const p = JSON.parse(line);
    assert.deepEqual(Object.keys(p), ["instance_id", "model_name_or_path", "model_patch"]);
    assert.equal(p.model_patch, patch.repeat(500));
  }
});
