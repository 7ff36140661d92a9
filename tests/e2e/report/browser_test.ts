/**
 * The report pages in headless Chromium: they load nothing, log no error, show something, fold
 * with JavaScript and show everything without it, and a hostile trajectory stays text.
 * DEFT_TEST_SCREENSHOTS=DIR keeps the screenshots there to look at.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildReport } from "../../../src/report/report.ts";
import { Chromium } from "../../helpers/chromium.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  hostileTrajectoryText,
  NOT_UTF8,
  ordinaryTrajectory,
  syntheticTasks,
  writeBatch,
} from "../../helpers/report_fixtures.ts";

async function keep(name: string, png: Uint8Array): Promise<void> {
  const dir = Deno.env.get("DEFT_TEST_SCREENSHOTS");
  if (dir) await Deno.writeFile(join(dir, name), png);
}

async function writeReport(dir: string, name: string, paths: string[]): Promise<string> {
  const file = join(dir, name);
  await Deno.writeTextFile(file, await buildReport(paths));
  return pathToFileURL(file).href;
}

/** A screenshot of about:blank, to tell a page that shows something from a blank one. */
async function blankSize(browser: Chromium): Promise<number> {
  const { session } = await browser.open("about:blank", { scripts: true });
  return (await browser.screenshot(session)).length;
}

Deno.test("report in Chromium: a run page loads nothing, logs no error, folds with JS, opens without", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(ordinaryTrajectory()));
  const url = await writeReport(dir.path, "run.html", [path]);
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const blank = await blankSize(browser);

  const on = await browser.open(url, { scripts: true });
  assert.deepEqual(on.log.errors, []);
  assert.deepEqual(on.log.requests, []);
  const png = await browser.screenshot(on.session);
  await keep("run.png", png);
  assert.ok(png.length > 3 * blank, `screenshot ${png.length} bytes, blank ${blank}`);
  const folded = await browser.evaluate<{ calls: number; open: number; visible: boolean }>(
    on.session,
    `({calls: document.querySelectorAll("details.call").length,
      open: document.querySelectorAll("details.call[open]").length,
      visible: document.querySelector("details.call pre").checkVisibility()})`,
  );
  assert.deepEqual(folded, { calls: 5, open: 0, visible: false });
  // A click on a folded call's line opens it.
  const opened = await browser.evaluate<boolean>(
    on.session,
    `(() => { const d = document.querySelectorAll("details.call")[1]; d.querySelector("summary").click();
      return d.open && d.querySelector(".diff").checkVisibility(); })()`,
  );
  assert.equal(opened, true);

  const off = await browser.open(url, { scripts: false });
  assert.deepEqual(off.log.errors, []);
  assert.deepEqual(off.log.requests, []);
  const shown = await browser.evaluate<{ calls: number; open: number; outputs: number }>(
    off.session,
    `({calls: document.querySelectorAll("details").length,
      open: document.querySelectorAll("details[open]").length,
      outputs: [...document.querySelectorAll("pre.out")].filter((e) => e.checkVisibility()).length})`,
  );
  assert.equal(shown.open, shown.calls);
  assert.equal(shown.outputs, 5);
  await keep("run-no-js.png", await browser.screenshot(off.session));
});

Deno.test("report in Chromium: a batch page from deft report sorts, links to runs, draws its plots", async () => {
  await using dir = await tempDir();
  const out = join(dir.path, "batch");
  await writeBatch(out, syntheticTasks(24, 6));
  const file = join(dir.path, "batch.html");
  const made = await runDeft(["report", out, "-o", file]);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stderr, /report written to .*batch\.html/);
  const url = pathToFileURL(file).href;
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const blank = await blankSize(browser);

  const page = await browser.open(url, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  assert.deepEqual(page.log.requests, []);
  const png = await browser.screenshot(page.session);
  await keep("batch.png", png);
  assert.ok(png.length > 3 * blank, `screenshot ${png.length} bytes, blank ${blank}`);
  const view = await browser.evaluate<
    { rows: number; svgs: number; dots: number; runsOpen: number }
  >(
    page.session,
    `({rows: document.querySelectorAll("table.sortable tbody tr").length,
      svgs: document.querySelectorAll(".plots svg").length,
      dots: document.querySelectorAll(".plots circle").length,
      runsOpen: document.querySelectorAll("details.run[open]").length})`,
  );
  assert.deepEqual(view, { rows: 24, svgs: 3, dots: 24, runsOpen: 0 });
  // Sorting by cost (the fifth column) puts the cheapest task first, then the dearest.
  const costs = syntheticTasks(24, 6).map((t) => t.cost);
  const firstCost = (clicks: number) =>
    browser.evaluate<string>(
      page.session,
      `(() => { const th = document.querySelectorAll("table.sortable th")[4];
        for (let i = 0; i < ${clicks}; i++) th.click();
        return document.querySelector("table.sortable tbody tr").cells[4].dataset.v; })()`,
    );
  assert.equal(Number(await firstCost(1)), Math.min(...costs));
  assert.equal(Number(await firstCost(1)), Math.max(...costs));
  // A task's link opens its run further down the page, its calls folded.
  const linked = await browser.evaluate<boolean>(
    page.session,
    `(async () => { const a = document.querySelector("table.sortable tbody a"); a.click();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const run = document.getElementById(a.getAttribute("href").slice(1));
      return run.open && run.getBoundingClientRect().top < innerHeight &&
        run.querySelectorAll("details.call").length > 0 && !run.querySelector("details.call[open]"); })()`,
  );
  assert.equal(linked, true);
});

// What the hostile payloads would leave behind, had any of them run or applied.
const PAYLOAD_TRACES = `({
  title: document.title,
  pwned: document.documentElement.dataset.pwned ?? null,
  planted: document.querySelectorAll("pwned-img, pwned-svg, #pwned-link, iframe, img, link, a[href^='javascript']").length,
  scripts: document.scripts.length,
  styles: document.querySelectorAll("style, [style]").length,
  bodyShown: getComputedStyle(document.body).display !== "none",
  text: document.body.textContent.includes('<script>document.title="PWNED-script"') &&
    document.body.textContent.includes("\\\\e[31mred") &&
    document.body.textContent.includes("\\\\u{fffd}") &&
    document.body.textContent.includes("more characters on this line cut"),
})`;

Deno.test("report in Chromium: a hostile trajectory shows as text and runs nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "hostile.json");
  await Deno.writeTextFile(path, hostileTrajectoryText());
  // And bytes that are not UTF-8, in a batch task's patch.
  const out = join(dir.path, "batch");
  await writeBatch(out, syntheticTasks(1, 1));
  const id = syntheticTasks(1, 1)[0].id;
  await Deno.copyFile(path, join(out, id, "trajectory.json"));
  await Deno.writeTextFile(join(out, "predictions.jsonl"), "");
  await Deno.writeFile(join(out, id, "patch.diff"), NOT_UTF8);
  const runUrl = await writeReport(dir.path, "hostile.html", [path]);
  const batchUrl = await writeReport(dir.path, "hostile-batch.html", [out]);
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  for (const url of [runUrl, batchUrl]) {
    for (const scripts of [true, false]) {
      const page = await browser.open(url, { scripts });
      assert.deepEqual(page.log.errors, [], `${url} scripts ${scripts}`);
      assert.deepEqual(page.log.requests, [], `${url} scripts ${scripts}`);
      const traces = await browser.evaluate<Record<string, unknown>>(page.session, PAYLOAD_TRACES);
      assert.deepEqual(traces, {
        title: url === runUrl ? `Deft run: ${path}` : `Deft batch: ${out}`,
        pwned: null,
        planted: 0,
        scripts: 1,
        styles: 1,
        bodyShown: true,
        text: true,
      }, `${url} scripts ${scripts}: ${JSON.stringify(traces)}`);
      if (url === runUrl && scripts) {
        await keep("hostile.png", await browser.screenshot(page.session));
      }
    }
  }
});

Deno.test("report in Chromium: two batches side by side, the flipped tasks linked", async () => {
  await using dir = await tempDir();
  const tasks = syntheticTasks(8, 3);
  await writeBatch(join(dir.path, "a"), tasks);
  await writeBatch(
    join(dir.path, "b"),
    tasks.map((t, i) => ({ ...t, status: i === 0 ? "failed" : i === 4 ? "passed" : t.status })),
  );
  const url = await writeReport(dir.path, "compare.html", [
    join(dir.path, "a"),
    join(dir.path, "b"),
  ]);
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const page = await browser.open(url, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  assert.deepEqual(page.log.requests, []);
  await keep("compare.png", await browser.screenshot(page.session));
  const flipped = await browser.evaluate<string[]>(
    page.session,
    `[...document.querySelectorAll("tr.flip-fixed, tr.flip-broke")].map((r) => r.innerText.replace(/\\s+/g, " ").trim())`,
  );
  assert.deepEqual(flipped, [
    `${tasks[0].id} passed failed no longer passes`,
    `${tasks[4].id} failed passed now passes`,
  ]);
});
