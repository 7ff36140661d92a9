/**
 * The report's network section in headless Chromium (issue 53, deliver 4): a run whose proxy
 * refused a host named like markup, with a reason full of markup, quotes, control bytes and an RTL
 * override. The section is visible, refused destinations first, the step names its own, and each
 * hostile string is shown as text: nothing ran, loaded or was added to the page.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildReport } from "../../../src/report/report.ts";
import { Chromium } from "../../helpers/chromium.ts";
import { HOSTILE, ordinaryTrajectory } from "../../helpers/report_fixtures.ts";
import { tempDir } from "../../helpers/temp.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("report in Chromium: the network section is visible, denied first, and hostile hosts and reasons are text", async () => {
  await using dir = await tempDir();
  const host = `${HOSTILE.script}${HOSTILE.handler}"'\x1b[31m\u202eexe.gro`;
  const reason = `${HOSTILE.breakout}${HOSTILE.link}\x07\u2066`;
  const t: Json = ordinaryTrajectory();
  // The fixture's steps end 1.5 s apart from 10:00:00; these fall in step 2.
  t.network = [
    { time: "2026-12-01T10:00:01.600Z", host: "pypi.org", port: 443, allowed: true, reason: "ok" },
    { time: "2026-12-01T10:00:02.000Z", host, port: 443, allowed: false, reason },
    { time: "2026-12-01T10:00:02.500Z", host, port: 443, allowed: false, reason },
  ];
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(t));
  const file = join(dir.path, "run.html");
  await Deno.writeTextFile(file, await buildReport([path]));
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  for (const scripts of [true, false]) {
    const page = await browser.open(pathToFileURL(file).href, { scripts });
    assert.deepEqual(page.log.errors, []);
    assert.deepEqual(page.log.requests, []);
    const seen = await browser.evaluate<{
      visible: boolean;
      rows: { cls: string; cells: string[]; visible: boolean }[];
      step: string;
      stepVisible: boolean;
      pwned: boolean;
    }>(
      page.session,
      `(() => {
        const section = document.querySelector("section.network");
        const rows = [...(section?.querySelectorAll("tbody tr") ?? [])].map((tr) => ({
          cls: tr.className,
          cells: [...tr.cells].map((c) => c.innerText),
          visible: tr.checkVisibility(),
        }));
        const step = document.querySelector(".step-network");
        return {
          visible: section?.checkVisibility() ?? false,
          rows,
          step: step?.innerText ?? "",
          stepVisible: step?.checkVisibility() ?? false,
          pwned: /PWNED/.test(document.title) || !!document.documentElement.dataset.pwned ||
            !!document.querySelector("pwned-img, pwned-svg, #pwned-link, iframe, img"),
        };
      })()`,
    );
    assert.equal(seen.visible, true, "the network section is visible");
    assert.equal(seen.pwned, false, "markup from the trajectory took effect");
    assert.deepEqual(seen.rows.map((r) => [r.cls, r.visible]), [
      ["net-denied", true],
      ["net-allowed", true],
    ]);
    const [mark, where, why, count] = seen.rows[0].cells;
    assert.equal(mark, "denied");
    // The host and reason read as they were written, control characters spelled out.
    assert.equal(
      where,
      `${HOSTILE.script}${HOSTILE.handler}"'\\e[31m\\u{202e}exe.gro:443`,
    );
    assert.equal(why, `${HOSTILE.breakout}${HOSTILE.link}\\x07\\u{2066}`);
    assert.equal(count, "2");
    assert.equal(seen.stepVisible, true, "the step's network line is visible");
    assert.ok(seen.step.startsWith("network: denied <script>"), seen.step);
    assert.ok(seen.step.includes("×2, allowed pypi.org:443"), seen.step);
  }
});
