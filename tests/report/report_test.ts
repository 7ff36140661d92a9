import * as assert from "node:assert/strict";
import { join } from "node:path";
import { buildReport, ReportInputError } from "../../src/report/report.ts";
import { loadBatch, runStats } from "../../src/report/model.ts";
import { flips, totals } from "../../src/report/batch.ts";
import { contentSecurityPolicy } from "../../src/report/page.ts";
import { costStrip, histogram } from "../../src/report/plots.ts";
import { tempDir } from "../helpers/temp.ts";
import {
  HOSTILE,
  hostileTrajectoryText,
  NOT_UTF8,
  ordinaryTrajectory,
  syntheticTasks,
  writeBatch,
} from "../helpers/report_fixtures.ts";

const SCRIPT_TAGS = /<script[\s>]/gi;

Deno.test("report: a run page has the header, each step, the edit as a diff and the denial", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(ordinaryTrajectory()));
  const html = await buildReport([path]);
  for (
    const expected of [
      "Make check.py pass.",
      "mock-model",
      "Step 5",
      "denied",
      "failed",
      "python:3.12",
    ]
  ) {
    assert.ok(html.includes(expected), `missing ${expected}`);
  }
  assert.ok(html.includes('<span class="del">-    return a - b</span>'));
  assert.ok(html.includes('<span class="add">+    return a + b</span>'));
  assert.match(html, /1,200 in \/ 80 out · 1\.5 s/);
});

Deno.test("report: every fold is open in the HTML, so the page reads with JavaScript off", async () => {
  await using dir = await tempDir();
  await writeBatch(join(dir.path, "b"), syntheticTasks(3, 4));
  const html = await buildReport([join(dir.path, "b")]);
  const details = html.match(/<details[^>]*>/g) ?? [];
  assert.ok(details.length > 10);
  for (const tag of details) assert.match(tag, / open[ >]/);
});

Deno.test("report: the page loads nothing and allows only its own script and style", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  await Deno.writeTextFile(path, JSON.stringify(ordinaryTrajectory()));
  const html = await buildReport([path]);
  const csp = await contentSecurityPolicy();
  assert.ok(html.includes(`content="${csp}"`));
  assert.match(csp, /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/);
  assert.ok(!/https?:\/\//.test(html.replace(/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/g, "")));
  assert.equal(html.match(SCRIPT_TAGS)?.length, 1);
  const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
  for (const href of hrefs) assert.match(href, /^#[a-z0-9-]+$/);
});

Deno.test("report: a hostile trajectory adds no tag, attribute or link of its own", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  await Deno.writeTextFile(path, hostileTrajectoryText());
  const html = await buildReport([path]);
  assert.equal(html.match(SCRIPT_TAGS)?.length, 1, "only the page's own script");
  for (const raw of Object.values(HOSTILE)) {
    if (/[<>"]/.test(raw)) assert.ok(!html.includes(raw), `raw hostile text in the page: ${raw}`);
  }
  for (
    const bad of ["<img", "<iframe", "<style>body{display", "<a id=", 'onerror="', "<svg onload"]
  ) {
    assert.ok(!html.includes(bad), bad);
  }
  assert.ok(html.includes("&lt;script&gt;document.title=&quot;PWNED-script&quot;"));
  assert.ok(html.includes("\\e[31mred\\e[0m"));
  assert.ok(html.includes("bad byte: \\u{fffd} here"));
  assert.match(html, /… 998000 more characters on this line cut/);
  assert.ok(html.length < 400_000, `the 1 MB line made a ${html.length}-character page`);
});

Deno.test("report: bytes that are not UTF-8 in a patch are shown as replacement characters", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b");
  await writeBatch(out, syntheticTasks(1, 2));
  const id = syntheticTasks(1, 2)[0].id;
  await Deno.writeTextFile(join(out, "predictions.jsonl"), "");
  await Deno.writeFile(join(out, id, "patch.diff"), NOT_UTF8);
  const html = await buildReport([out]);
  assert.ok(html.includes('<span class="add">+ \ufffd\ufffd\ufffd(</span>'));
});

Deno.test("report: a batch reads the last result of each task, interrupted ones from result.json", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b");
  const tasks = syntheticTasks(6, 3);
  tasks[2].status = "interrupted";
  await writeBatch(out, tasks);
  // A task run again appends a later line; the last one counts.
  const again = JSON.parse(await Deno.readTextFile(join(out, tasks[4].id, "result.json")));
  await Deno.writeTextFile(
    join(out, "results.jsonl"),
    JSON.stringify({ ...again, status: "passed", success: true }) + "\n{torn",
    { append: true },
  );
  const batch = await loadBatch(out);
  assert.deepEqual(batch.runs.map((r) => r.name), tasks.map((t) => t.id));
  assert.equal(runStats(batch.runs[2]).status, "interrupted");
  assert.equal(runStats(batch.runs[4]).status, "passed");
  const stats = runStats(batch.runs[0]);
  assert.deepEqual(
    { steps: stats.steps, tokens: stats.tokens, patchLines: stats.patchLines },
    { steps: 3, tokens: 3840, patchLines: 2 },
  );
  assert.equal(totals(batch.runs).passed, 5);
});

Deno.test("report: two batches show the tasks that flipped and both totals", async () => {
  await using dir = await tempDir();
  const tasks = syntheticTasks(5, 2);
  await writeBatch(join(dir.path, "a"), tasks);
  const later = tasks.map((t) => ({ ...t }));
  later[0].status = "failed";
  later[4].status = "passed";
  await writeBatch(join(dir.path, "b"), later);
  const [a, b] = [await loadBatch(join(dir.path, "a")), await loadBatch(join(dir.path, "b"))];
  assert.deepEqual(flips(a, b).map((f) => [f.id, f.kind]), [[tasks[0].id, "broke"], [
    tasks[4].id,
    "fixed",
  ]]);
  const html = await buildReport([join(dir.path, "a"), join(dir.path, "b")]);
  assert.match(html, /Flipped \(2\)/);
  assert.match(html, /no longer passes/);
  assert.match(html, /now passes/);
});

Deno.test("report: a path that is neither a file, a batch nor a session says what to give", async () => {
  await using dir = await tempDir();
  await assert.rejects(() => buildReport([join(dir.path, "nothing/here")]), ReportInputError);
  await assert.rejects(() => buildReport([dir.path]), /not a batch's output folder/);
});

Deno.test("report: a session id is found in the trajectories folder, by file name or session_id", async () => {
  await using dir = await tempDir();
  const folder = join(dir.path, "deft", "trajectories");
  await Deno.mkdir(folder, { recursive: true });
  await Deno.writeTextFile(
    join(folder, "trajectory_20261201_100000_abcdef.json"),
    JSON.stringify(ordinaryTrajectory()),
  );
  await Deno.writeTextFile(
    join(folder, "renamed.json"),
    JSON.stringify({
      ...ordinaryTrajectory(),
      session_id: "20261202_090000_fedcba",
      task: "Other task.",
    }),
  );
  const before = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", dir.path);
  try {
    assert.ok((await buildReport(["20261201_100000_abcdef"])).includes("Make check.py pass."));
    assert.ok((await buildReport(["20261202_090000_fedcba"])).includes("Other task."));
    await assert.rejects(
      () => buildReport(["20990101_000000_000000"]),
      /no session 20990101_000000_000000/,
    );
  } finally {
    if (before === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", before);
  }
});

Deno.test("report: a hostile task id and error in a batch stay text; ids never make anchors", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b");
  const tasks = syntheticTasks(1, 1);
  tasks[0].id = `x" id="y"><script>document.title="PWNED"</script>`;
  await writeBatch(out, tasks);
  const result = JSON.parse((await Deno.readTextFile(join(out, "results.jsonl"))).trim());
  await Deno.writeTextFile(
    join(out, "results.jsonl"),
    JSON.stringify({ ...result, error: HOSTILE.link, status: "<b>odd</b>" }) + "\n",
  );
  const html = await buildReport([out]);
  assert.equal(html.match(SCRIPT_TAGS)?.length, 1);
  assert.ok(!html.includes(HOSTILE.link));
  assert.ok(!html.includes("<b>odd"));
  const ids = [...html.matchAll(/ id="([^"]*)"/g)].map((m) => m[1]);
  for (const id of ids) assert.match(id, /^[a-z0-9-]+$/);
});

Deno.test("report: a run with a known model shows its cost at list prices; an unknown one a dash", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "t.json");
  await Deno.writeTextFile(path, JSON.stringify({ ...ordinaryTrajectory(), model: "gpt-4o" }));
  // 6,000 input tokens of which 300 cached, 400 output: 5,700 × $2.5 + 300 × $1.25 + 400 × $10 per M.
  assert.match(await buildReport([path]), /<dt>cost<\/dt><dd>\$0\.0186 at list prices<\/dd>/);
  await Deno.writeTextFile(path, JSON.stringify(ordinaryTrajectory()));
  assert.match(await buildReport([path]), /<dt>cost<\/dt><dd>—<\/dd>/);
});

Deno.test("report plots: steps get one bar per value; a cost dot per task, by outcome", () => {
  const bars = histogram([3, 3, 5, 6, 6], "steps");
  assert.equal(bars.match(/<rect /g)?.length, 4);
  assert.ok(bars.includes("<title>3 steps: 2</title>"));
  assert.ok(bars.includes("<title>4 steps: 0</title>"));
  const spread = histogram([0.5, 100.25, 300, 20, 150], "s");
  assert.equal(spread.match(/<rect /g)?.length, 12);
  const dots = costStrip([
    { cost: 0.1, passed: true, label: "<a>" },
    { cost: 0.2, passed: false, label: "b" },
    { cost: NaN, passed: false, label: "c" },
  ]);
  assert.equal(dots.match(/<circle /g)?.length, 2);
  assert.ok(dots.includes("<title>&lt;a&gt;: $0.1000</title>"));
  assert.equal(
    costStrip([{ cost: NaN, passed: true, label: "x" }]),
    `<p class="note">no task reported a cost</p>`,
  );
});

Deno.test("report: fields of the wrong type in a planted trajectory or result show as unknown", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "b");
  const tasks = syntheticTasks(2, 2);
  await writeBatch(out, tasks);
  const traj = {
    ...ordinaryTrajectory(),
    task: { not: "text" },
    max_steps: "many",
    execution_time: "long",
    total_usage: { input_tokens: "1", output_tokens: null },
    container: { runtime: 7, image: null, id: 12345678901234 },
    agent_steps: [
      { step_number: "x", state: 3, llm_response: null, tool_calls: null, tool_results: null },
      {
        state: "error",
        llm_response: { content: 5, tool_calls: [{ name: 9, arguments: [1] }] },
        tool_results: [null],
      },
    ],
  };
  await Deno.writeTextFile(join(out, tasks[0].id, "trajectory.json"), JSON.stringify(traj));
  const result = JSON.parse(await Deno.readTextFile(join(out, tasks[0].id, "result.json")));
  await Deno.writeTextFile(
    join(out, "results.jsonl"),
    JSON.stringify({ ...result, steps: "3", tokens: { total: "9" }, cost: "1", duration: null }) +
      "\n",
  );
  const batch = await loadBatch(out);
  assert.deepEqual(runStats(batch.runs[0]), {
    status: "passed",
    steps: 2,
    tokens: 0,
    cost: null,
    seconds: null,
    toolErrors: 1,
    patchLines: 2,
  });
  const html = await buildReport([out]);
  assert.ok(html.includes("<dt>tokens</dt><dd>— in, — out, — cache read</dd>"));
  assert.ok(html.includes('<span class="tool">9</span>'));
});
