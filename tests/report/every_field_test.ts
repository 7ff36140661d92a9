/**
 * Promises of the report page (issue 50):
 * - every string field of a trajectory reaches the page as text, wherever it is shown, including
 *   where the run happened (a container image named like markup): "report: every string field …"
 * - a field the page shows is shown (not dropped to hide it): the same test counts them.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { buildReport } from "../../src/report/report.ts";
import { ordinaryTrajectory } from "../helpers/report_fixtures.ts";
import { tempDir } from "../helpers/temp.ts";

/** `value` with every string (keys left alone) prefixed by a tag naming its place in `places`. */
function markEveryString(value: unknown, at: string, places: string[]): unknown {
  if (typeof value === "string") {
    places.push(at);
    return `<b data-field="${places.length - 1}">${value}`;
  }
  if (Array.isArray(value)) return value.map((v, i) => markEveryString(v, `${at}[${i}]`, places));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, markEveryString(v, `${at}.${k}`, places)]),
    );
  }
  return value;
}

Deno.test("report: every string field of a run, the container's image included, is text on the page", async () => {
  await using dir = await tempDir();
  const places: string[] = [];
  const run = {
    ...ordinaryTrajectory(),
    container: { runtime: "docker", image: "py", id: "0a1b" },
    // What the user did between steps (issue 52): each text a planted file could hold.
    events: [
      { kind: "prompt", text: "a later prompt", time: "2026-12-01T10:00:09.000Z", at_steps: 2 },
      {
        kind: "shell",
        command: "ls",
        output: "a b",
        time: "2026-12-01T10:00:08.000Z",
        at_steps: 2,
      },
      { kind: "undo", said: "reverted", time: "2026-12-01T10:00:10.000Z", at_steps: 3 },
    ],
    compactions: [{
      time: "2026-12-01T10:00:11.000Z",
      at_interactions: 1,
      at_rewinds: 0,
      messages: [{ role: "user", content: "the summary" }],
    }],
  };
  const marked = markEveryString(run, "trajectory", places) as typeof run;
  // An event's kind and a message's role name what it is, as a step's state does not: kept.
  marked.events.forEach((e, i) => e.kind = run.events[i].kind);
  marked.compactions[0].messages[0].role = "user";
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(marked));
  const html = await buildReport([path]);
  const raw = [...html.matchAll(/<b data-field="(\d+)">/g)].map((m) => places[Number(m[1])]);
  assert.deepEqual(raw, [], `fields written into the page as markup: ${raw.join(", ")}`);
  const shown = new Set(
    [...html.matchAll(/&lt;b data-field=&quot;(\d+)&quot;&gt;/g)].map((m) => places[Number(m[1])]),
  );
  // Where the run happened is on the page, as text.
  for (
    const field of [
      "trajectory.container.image",
      "trajectory.container.runtime",
      "trajectory.events[0].text",
      "trajectory.events[1].command",
      "trajectory.events[1].output",
      "trajectory.events[2].said",
      "trajectory.compactions[0].messages[0].content",
    ]
  ) {
    assert.ok(shown.has(field), `${field} is not shown: ${[...shown].join(", ")}`);
  }
  assert.ok(shown.size >= 10, `only ${shown.size} fields shown: ${[...shown].join(", ")}`);
});
