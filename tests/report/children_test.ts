import * as assert from "node:assert/strict";
import { join } from "node:path";
import { buildReport } from "../../src/report/report.ts";
import { tempDir } from "../helpers/temp.ts";
import { trajectory } from "../helpers/report_fixtures.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** A parent whose Task calls name these child trajectory paths. */
function parentNaming(links: string[]): Json {
  const t: Json = trajectory(
    "PARENT-TASK",
    links.map((_, i) => ({
      text: `handing off ${i}`,
      tool: "Task",
      args: { description: `part ${i}`, prompt: "go" },
      output: "task ended",
    })),
  );
  t.agent_steps.forEach((s: Json, i: number) => {
    s.tool_results[0].subagent = { session_id: `child-${i}`, trajectory: links[i] };
  });
  return t;
}

Deno.test("report: a Task call's child is read only from where Deft writes trajectories, never from a path the file names elsewhere", async () => {
  await using dir = await tempDir();
  await using elsewhere = await tempDir();
  const child = join(dir.path, "trajectory_20261201_100001_c0ffee.json");
  const childData: Json = trajectory("CHILD-NESTED-TASK", [{
    text: "child step",
    tool: "bash",
    args: { command: "echo CHILD-NESTED-CALL" },
    output: "ok",
  }]);
  childData.parent = { session_id: "20261201_100000_abcdef", trajectory: "p.json" };
  await Deno.writeTextFile(child, JSON.stringify(childData));
  // A valid trajectory, but outside the parent's folder and Deft's: not followed.
  const planted = join(elsewhere.path, "trajectory_20261201_100002_bad000.json");
  await Deno.writeTextFile(
    planted,
    JSON.stringify(trajectory("PLANTED-TASK", [{
      text: "x",
      tool: "bash",
      args: { command: "echo PLANTED" },
      output: "x",
    }])),
  );
  const parent = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(
    parent,
    JSON.stringify(parentNaming([child, planted, "/etc/passwd", "__proto__", parent])),
  );
  const html = await buildReport([parent]);
  assert.ok(html.includes("CHILD-NESTED-TASK") && html.includes("CHILD-NESTED-CALL"));
  assert.ok(html.includes("a child agent of session 20261201_100000_abcdef"));
  assert.ok(!html.includes("PLANTED-TASK"), "a file elsewhere is not read");
  assert.equal(html.match(/its trajectory is not beside this one/g)?.length, 4);
  // The parent itself is not read again as its own child.
  assert.equal(html.match(/<dt>task<\/dt><dd>PARENT-TASK/g)?.length, 1);
});

Deno.test("report: a child named by many calls, at every level, is shown once and the report stays small", async () => {
  await using dir = await tempDir();
  const N = 20;
  const names = ["a0", "b1", "c2", "d3"].map((n) =>
    join(dir.path, `trajectory_20261201_10000${n[1]}_${n}${n}${n}.json`)
  );
  // Each level's every call names the next level's one file: N^3 nestings if each is drawn.
  for (let level = 0; level < names.length; level++) {
    const next = names[level + 1];
    const t: Json = next ? parentNaming(Array(N).fill(next)) : trajectory("LAST-LEVEL-TASK", [{
      text: "x",
      tool: "bash",
      args: { command: "true" },
      output: "ok",
    }]);
    if (next) t.task = `LEVEL-${level}-TASK`;
    await Deno.writeTextFile(names[level], JSON.stringify(t));
  }
  const html = await buildReport([names[0]]);
  const drawn = (task: string) => html.split(`<dt>task</dt><dd>${task}</dd>`).length - 1;
  assert.equal(drawn("LAST-LEVEL-TASK"), 1, "the deepest child is drawn once");
  assert.equal(drawn("LEVEL-1-TASK"), 1, "a child is drawn once");
  assert.equal(
    html.match(/its steps are shown under the first call that names it/g)?.length,
    3 * (N - 1),
    "every other call says where its child is shown",
  );
  assert.ok(html.length < 2_000_000, `the report is ${html.length} characters`);
});
