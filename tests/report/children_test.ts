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
  assert.equal(html.match(/not shown: its trajectory is not beside this one/g)?.length, 3);
  assert.equal(html.match(/not shown: its trajectory does not name this session/g)?.length, 1);
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
    t.session_id = `20261201_10000${level}_level${level}`;
    if (level > 0) t.parent = { session_id: `20261201_10000${level - 1}_level${level - 1}` };
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

/** Runs `body` with Deft's state folder (and so its trajectories folder) at `state`. */
async function withState<T>(state: string, body: () => Promise<T>): Promise<T> {
  const saved = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state);
  try {
    return await body();
  } finally {
    saved === undefined ? Deno.env.delete("XDG_STATE_HOME") : Deno.env.set("XDG_STATE_HOME", saved);
  }
}

Deno.test("report: a trajectory naming the user's other sessions' children does not pull them into its page", async () => {
  await using state = await tempDir();
  await using workspace = await tempDir();
  const sessions = join(state.path, "deft", "trajectories");
  await Deno.mkdir(sessions, { recursive: true });
  // The user's own session and the child its Task call ran, where Deft writes them.
  const mine = join(sessions, "trajectory_20261201_090000_a1a1a1.json");
  const child = join(sessions, "trajectory_20261201_090001_c1c1c1.json");
  const childData: Json = trajectory("PRIVATE-CHILD-TASK", [{
    text: "secret step",
    tool: "bash",
    args: { command: "echo PRIVATE-CHILD-CALL" },
    output: "ok",
  }]);
  childData.session_id = "20261201_090001_c1c1c1";
  childData.parent = { session_id: "20261201_090000_a1a1a1", trajectory: mine };
  await Deno.writeTextFile(child, JSON.stringify(childData));
  const mineData: Json = parentNaming([child]);
  mineData.session_id = "20261201_090000_a1a1a1";
  await Deno.writeTextFile(mine, JSON.stringify(mineData));
  // A child beside the hostile file that names another session as its parent.
  const beside = join(workspace.path, "trajectory_20261201_090003_b3b3b3.json");
  const besideData: Json = trajectory("STRANGER-TASK", []);
  besideData.parent = { session_id: "20261201_080000_000000", trajectory: null };
  await Deno.writeTextFile(beside, JSON.stringify(besideData));

  await withState(state.path, async () => {
    // The user's own report still shows its child.
    const own = await buildReport([mine]);
    assert.ok(own.includes("PRIVATE-CHILD-CALL"), "the session's own child is shown");

    // A hostile file names the child: with its own session id, and with the user's copied.
    for (const session of ["20261201_095959_ba0ba0", "20261201_090000_a1a1a1"]) {
      const hostile = join(workspace.path, `trajectory_${session}.json`);
      const data: Json = parentNaming([child, beside]);
      data.session_id = session;
      await Deno.writeTextFile(hostile, JSON.stringify(data));
      const html = await buildReport([hostile]);
      assert.ok(!html.includes("PRIVATE-CHILD"), `another session's child is drawn (${session})`);
      assert.ok(!html.includes("STRANGER-TASK"), "a child naming another parent is drawn");
      assert.equal(
        html.match(/not shown: its trajectory does not name this session as its parent/g)?.length,
        2,
      );
    }
  });
});
