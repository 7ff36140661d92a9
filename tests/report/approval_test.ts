/** The report shows each call's approval decision and who made it, as the trajectory records it. */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { buildReport } from "../../src/report/report.ts";
import { ordinaryTrajectory } from "../helpers/report_fixtures.ts";
import { tempDir } from "../helpers/temp.ts";

type Step = { tool_results: Record<string, unknown>[] };

Deno.test("report: each call shows its decision and who made it; an old file still shows the denial", async () => {
  await using dir = await tempDir();
  const old = ordinaryTrajectory();
  const recorded = structuredClone(old);
  const decisions = [
    { decision: "allow", decided_by: "mode", mode: "commands", asked: false, unasked: true },
    {
      decision: "allow",
      decided_by: "always",
      mode: "commands",
      asked: false,
      always: "$ git push",
    },
    {
      decision: "deny",
      decided_by: "user",
      mode: "commands",
      asked: true,
      answer: "no",
      reason: "<b>use the build script</b>",
    },
    { decision: "allow", decided_by: "session", mode: "never", asked: false },
    { decision: "allow", decided_by: "user", mode: "commands", asked: true, answer: "yes" },
  ];
  (recorded.agent_steps as Step[]).forEach((s, i) => s.tool_results[0].approval = decisions[i]);
  await Deno.writeTextFile(join(dir.path, "new.json"), JSON.stringify(recorded));
  await Deno.writeTextFile(join(dir.path, "old.json"), JSON.stringify(old));

  const html = await buildReport([join(dir.path, "new.json")]);
  // What the mode let through unasked is the default: no mark on the call, a line in the header.
  assert.ok(!html.includes("allowed by mode"));
  assert.match(html, /1 call\(s\) let through by mode commands without asking/);
  for (
    const words of [
      "allowed by always for $ git push",
      "denied by the user: no — &lt;b&gt;use the build script&lt;/b&gt;",
      "allowed by this session: approval off",
      "allowed by the user: yes",
    ]
  ) {
    assert.ok(html.includes(words), `missing ${words}`);
  }
  assert.ok(!html.includes("<b>use"), "the reason stays text");

  const before = await buildReport([join(dir.path, "old.json")]);
  assert.match(before, /<span class="badge warn">denied<\/span>/);
  assert.ok(!before.includes("allowed by"));
});
