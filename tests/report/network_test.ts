/**
 * The network proxy's decisions in `deft report` (issue 53, deliver 4): a run's "Network" section
 * (destination, allowed or denied, reason, count, first time, the step), each step's own
 * destinations, a batch's denied destinations per task, a child agent's own section; hostile
 * strings stay text, 100k decisions make a small page, malformed entries are left out with a note.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { buildReport } from "../../src/report/report.ts";
import { HOSTILE, ordinaryTrajectory, trajectory, writeBatch } from "../helpers/report_fixtures.ts";
import { tempDir } from "../helpers/temp.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const at = (seconds: number) => new Date(Date.parse("2026-12-01T10:00:00Z") + seconds * 1000);
const decision = (
  seconds: number,
  host: string,
  port: number,
  allowed: boolean,
  reason: string,
) => ({
  time: at(seconds).toISOString(),
  host,
  port,
  allowed,
  reason,
});

async function reportOf(data: unknown): Promise<string> {
  await using dir = await tempDir();
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(data));
  return await buildReport([path]);
}

/** The page's network section, or "" without one. */
function section(html: string): string {
  return /<section class="network">[\s\S]*?<\/section>/.exec(html)?.[0] ?? "";
}

/** What a reader sees of some HTML: tags dropped, entities read. */
function shown(html: string): string {
  return html.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ");
}

Deno.test("report network: a run lists each destination, denied first and marked, with reason, count, first time and step", async () => {
  // The fixture's steps end at 1.5 s, 3 s, 4.5 s, 6 s and 7.5 s.
  const t: Json = ordinaryTrajectory();
  t.network = [
    decision(0.2, "pypi.org", 443, true, "allowed"),
    decision(2.0, "evil.example", 443, false, "not in allow list"),
    decision(2.5, "evil.example", 443, false, "not in allow list"),
    decision(4.0, "pypi.org", 443, true, "allowed"),
    decision(7.9, "169.254.169.254", 80, false, "a private or metadata address"),
  ];
  const html = await reportOf(t);
  const net = section(html);
  assert.ok(net, "the page has a network section");
  const rows = [...net.matchAll(/<tr class="net-(\w+)">([\s\S]*?)<\/tr>/g)]
    .map((m) => `${m[1]}: ${shown(m[2]).trim()}`);
  assert.deepEqual(rows, [
    "denied: denied evil.example:443 not in allow list 2 2026-12-01T10:00:02.000Z step 2",
    "denied: denied 169.254.169.254:80 a private or metadata address 1 2026-12-01T10:00:07.900Z after the last step",
    "allowed: allowed pypi.org:443 allowed 2 2026-12-01T10:00:00.200Z step 1",
  ]);
  assert.match(shown(net), /5 decision\(s\): 3 denied to 2 destination\(s\), 2 allowed to 1/);
  // Each step names the destinations decided while it ran.
  const steps = html.split(`<div class="step`).slice(1).map((s) =>
    shown(/<p class="step-network">([\s\S]*?)<\/p>/.exec(s)?.[1] ?? "").trim()
  );
  assert.deepEqual(steps, [
    "network: allowed pypi.org:443",
    "network: denied evil.example:443 (not in allow list) ×2",
    "network: allowed pypi.org:443",
    "",
    "",
  ]);
});

Deno.test("report network: a hostile host or reason (markup, quotes, control bytes, RTL override) is text", async () => {
  const t: Json = ordinaryTrajectory();
  const host = `${HOSTILE.script}"'\x1b[31mred\x07\u202eexe.gro`;
  const reason = `${HOSTILE.handler}${HOSTILE.breakout}\x00\u2066`;
  t.network = [decision(2, host, 443, false, reason), decision(2, host, 443, true, "allowed")];
  const html = await reportOf(t);
  // The page's own script is its one script; no image, iframe or handler came in.
  assert.equal(html.match(/<script/g)?.length, 1);
  assert.ok(!/<img|<iframe|onerror="/.test(html), "markup from the file took effect");
  const net = section(html);
  assert.ok(
    net.includes("&lt;script&gt;document.title=&quot;PWNED-script&quot;"),
    "the host is shown as text",
  );
  assert.ok(net.includes("&quot;&#39;\\e[31mred\\x07\\u{202e}exe.gro"), "controls spelled out");
  assert.ok(net.includes("&lt;img src=x onerror=&quot;"), "the reason is shown as text");
  assert.ok(net.includes("\\x00\\u{2066}"), "the reason's controls spelled out");
  // deno-lint-ignore no-control-regex
  assert.ok(!/[\x00-\x08\x1b\u202e\u2066]/.test(html), "a raw control byte reached the page");
});

Deno.test("report network: 100,000 decisions make a small page, the rest counted as not shown", async () => {
  const t: Json = ordinaryTrajectory();
  const n = 100_000;
  t.network = Array.from(
    { length: n },
    (_, i) => decision(2, `host-${i}.flood.example`, 443, i % 2 === 0, "not in allow list"),
  );
  // One host of a million characters, first.
  t.network.unshift(decision(2, "h".repeat(1_000_000), 443, false, "r".repeat(1_000_000)));
  const html = await reportOf(t);
  assert.ok(html.length < 1_000_000, `the page is ${html.length} characters`);
  const net = shown(section(html));
  assert.match(net, /100,?001 decision\(s\)/);
  assert.match(net, new RegExp(`${n + 1 - 200} more destinations not shown`));
  assert.match(net, /999700 more characters cut/);
  // Step 2's line is capped too.
  assert.match(shown(html), new RegExp(`${n + 1 - 5} more destinations not shown`));
});

Deno.test("report network: malformed entries are left out with a note; a list that is not one too", async () => {
  const t: Json = ordinaryTrajectory();
  t.network = [
    null,
    "evil.example:443",
    7,
    [],
    {},
    { ...decision(2, "a.example", 443, false, "x"), port: "443" },
    { ...decision(2, "b.example", 443, false, "x"), port: 70000 },
    { ...decision(2, "c.example", 443, false, "x"), port: 4.5 },
    { ...decision(2, "d.example", 443, false, "x"), allowed: "no" },
    { ...decision(2, "e.example", 443, false, "x"), host: { toString: "evil" } },
    { ...decision(2, "f.example", 443, false, "x"), host: "" },
    { ...decision(2, "g.example", 443, false, "x"), reason: null },
    { ...decision(2, "h.example", 443, false, "x"), time: 12 },
    decision(2, "kept.example", 8443, false, "not in allow list"),
  ];
  const net = shown(section(await reportOf(t)));
  assert.match(net, /13 entries of the network list did not have the recorded shape/);
  assert.match(net, /denied kept\.example:8443 not in allow list 1/);
  assert.ok(!/[a-h]\.example/.test(net), net);

  for (const bad of [{ "evil.example": 1 }, "evil.example", 42]) {
    const other: Json = ordinaryTrajectory();
    other.network = bad;
    const html = await reportOf(other);
    assert.match(shown(section(html)), /the trajectory's network field is not a list/);
    assert.match(html, /Timeline/);
  }
});

Deno.test("report network: a batch's table counts each task's denied destinations; its run shows them", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "batch");
  await writeBatch(out, [
    { id: "task-a", status: "failed", steps: 3, cost: 0.1, duration: 10 },
    { id: "task-b", status: "passed", steps: 3, cost: 0.1, duration: 10 },
  ]);
  const file = join(out, "task-a", "trajectory.json");
  const data: Json = JSON.parse(await Deno.readTextFile(file));
  data.network = [
    decision(1, "evil.example", 443, false, "not in allow list"),
    decision(2, "evil.example", 443, false, "not in allow list"),
    decision(2, "evil.example", 80, false, "port not allowed"),
    decision(3, "pypi.org", 443, true, "allowed"),
  ];
  await Deno.writeTextFile(file, JSON.stringify(data));
  const html = await buildReport([out]);
  const head = /<thead>([\s\S]*?)<\/thead>/.exec(html)![1];
  const column = [...head.matchAll(/<th>(.*?)<\/th>/g)].findIndex((m) =>
    m[1] === "denied destinations"
  );
  assert.ok(column > 0, head);
  const cells = (task: string) => {
    const row = html.split("<tr>").find((r) => r.includes(`>${task}</a>`))!;
    return [...row.matchAll(/<td[^>]*data-v="([^"]*)"/g)].map((m) => m[1]);
  };
  assert.equal(cells("task-a")[column], "2");
  assert.equal(cells("task-b")[column], "");
  assert.match(shown(section(html)), /denied evil\.example:80 port not allowed 1/);

  // A task that met a thousand hosts shows 20 of them in a batch page, and says how many more.
  data.network = Array.from(
    { length: 1000 },
    (_, i) => decision(2, `flood-${i}.example`, 443, false, "not in allow list"),
  );
  await Deno.writeTextFile(file, JSON.stringify(data));
  const flooded = section(await buildReport([out]));
  assert.equal(flooded.match(/<tr class="net-denied">/g)?.length, 20);
  assert.match(shown(flooded), /980 more destinations not shown/);
});

Deno.test("report network: a child agent's decisions are shown in its own section, nested in the Task call", async () => {
  await using dir = await tempDir();
  const child = join(dir.path, "trajectory_20261201_100001_c0ffee.json");
  const childData: Json = trajectory("CHILD-TASK", [{
    text: "child step",
    tool: "bash",
    args: { command: "curl https://child-only.example/" },
    output: "blocked",
  }]);
  childData.network = [decision(1, "child-only.example", 443, false, "not in allow list")];
  childData.parent = { session_id: "20261201_100000_abcdef", trajectory: null };
  await Deno.writeTextFile(child, JSON.stringify(childData));
  const parent: Json = trajectory("PARENT-TASK", [{
    text: "handing off",
    tool: "Task",
    args: { description: "part", prompt: "go" },
    output: "task ended",
  }]);
  parent.agent_steps[0].tool_results[0].subagent = { session_id: "child", trajectory: child };
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(parent));
  const html = await buildReport([path]);
  const nested = /<details class="child fold"[\s\S]*$/.exec(html)?.[0] ?? "";
  assert.match(shown(section(nested)), /denied child-only\.example:443 not in allow list 1/);
  assert.ok(!section(html.slice(0, html.length - nested.length)), "the parent has no list");
});

Deno.test("report network: decisions the trajectory counted but did not list are said", async () => {
  const t: Json = ordinaryTrajectory();
  t.network = [decision(2, "evil.example", 443, false, "not in allow list")];
  t.network_not_recorded = 4321;
  const net = shown(section(await reportOf(t)));
  assert.match(net, /4321 more decisions were made than the trajectory lists/);
  // A count that is not a sane number says nothing.
  t.network_not_recorded = "<b>9</b>";
  assert.doesNotMatch(shown(section(await reportOf(t))), /more decision/);
});
