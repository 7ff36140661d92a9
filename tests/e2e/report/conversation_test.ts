/**
 * The report of an interactive conversation in headless Chromium (issue 52):
 * - every prompt, `!command`, `/undo`, `/rewind` and `/compact` of a real session is in the
 *   timeline, in the order typed, over both files /compact split it into, whichever is named:
 *   "report of a conversation: every prompt, !command, /undo, /rewind, /compact in order"
 * - no mark on a call the approval mode let through (the same test)
 * - a turn's first step counts from its prompt, not from the end of the turn before:
 *   "report of a conversation: the time before a prompt is not a step's"
 * - histograms: none for a few tasks, and each bar labelled otherwise: "report of a batch: …"
 * DEFT_TEST_SCREENSHOTS=DIR keeps the screenshots there to look at.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildReport } from "../../../src/report/report.ts";
import { Chromium } from "../../helpers/chromium.ts";
import { runDeft, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { ordinaryTrajectory, syntheticTasks, writeBatch } from "../../helpers/report_fixtures.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

async function keep(name: string, png: Uint8Array): Promise<void> {
  const dir = Deno.env.get("DEFT_TEST_SCREENSHOTS");
  if (dir) await Deno.writeFile(join(dir, name), png);
}

// Each timeline entry in one line: who or what, and its first words.
const TIMELINE = `[...document.querySelectorAll(".you, .event, .step, .part")].map((e) =>
  e.classList.contains("you") ? "you: " + e.querySelector(".says").innerText.trim()
  : e.classList.contains("step") ? "step"
  : e.classList.contains("part") ? "part"
  : e.querySelector("summary, h4").innerText.replace(/\\s+/g, " ").replace(/ \\d\\d:\\d\\d:\\d\\d UTC/, "").trim())`;

Deno.test({
  name:
    "report of a conversation: every prompt, !command, /undo, /rewind, /compact in order, over the files /compact made",
  sanitizeResources: false,
  fn: async () => {
    await using dir = await tempDir();
    const repo = await makeBuggyRepo();
    const home = await trustedHome();
    const env = { HOME: home, XDG_STATE_HOME: join(home, "state") };
    const mock = MockLLM.start([
      chatToolCalls([["str_replace_based_edit_tool", {
        command: "create",
        path: `${repo}/first.txt`,
        file_text: "from turn one\n",
      }]]),
      chatText("made first.txt"),
      chatToolCalls([["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${repo}/calc.py`,
        old_str: "return a - b",
        new_str: "return a + b",
      }]]),
      chatText("fixed add"),
      chatText("SUMMARY: first.txt made"),
      chatText("all done"),
    ]);
    try {
      const session = await runDeft(
        [
          ...["interactive", "-w", repo, "--approval", "never", "-p", "openai_compatible"],
          ...["-m", "mock", "--model-base-url", `${mock.url}/v1`, "-k", "k"],
        ],
        {
          cwd: home,
          env,
          stdin: [
            "!echo before-any-prompt",
            "make first",
            "!echo between-turns",
            "fix add",
            "/undo",
            "/rewind 1 conversation",
            "/compact",
            "last prompt",
            "exit",
          ].join("\n") + "\n",
        },
      );
      assert.equal(session.code, 0, session.stderr);
      assert.match(session.stderr, /reverted an edit of .*calc\.py/);
      assert.match(session.stderr, /compacted the conversation/);
      const folder = join(home, "state", "deft", "trajectories");
      const files: { path: string; id: string; compact: boolean }[] = [];
      for await (const entry of Deno.readDir(folder)) {
        if (!entry.name.endsWith(".json")) continue;
        const data = JSON.parse(await Deno.readTextFile(join(folder, entry.name)));
        const path = join(folder, entry.name);
        files.push({ path, id: data.session_id, compact: data.resumed_from?.by === "compact" });
      }
      assert.equal(files.length, 2, JSON.stringify(files));
      const later = files.find((f) => f.compact)!;
      const earlier = files.find((f) => !f.compact)!;

      await using browser = await Chromium.launch(join(dir.path, "profile"));
      // The later file named by its session id (as deft sessions lists it), the earlier by path.
      for (const [name, named] of [["later", later.id], ["earlier", earlier.path]]) {
        const file = join(dir.path, `${name}.html`);
        const made = await runDeft(["report", named, "-o", file], { cwd: home, env });
        assert.equal(made.code, 0, made.stderr);
        const page = await browser.open(pathToFileURL(file).href, { scripts: false });
        assert.deepEqual(page.log.errors, []);
        assert.deepEqual(page.log.requests, []);
        await keep(`conversation-${name}.png`, await browser.screenshot(page.session));
        const entries = await browser.evaluate<string[]>(page.session, TIMELINE);
        assert.deepEqual(entries, [
          "! echo before-any-prompt (sent with the next prompt)",
          "you: make first",
          "step",
          "step",
          "! echo between-turns",
          "you: fix add",
          "step",
          "step",
          "/undo",
          "/rewind",
          "/compact the conversation replaced by the model's summary (3 message(s))",
          "part",
          "you: last prompt",
          "step",
        ], `${name}: ${JSON.stringify(entries)}`);
        const said = await browser.evaluate<Record<string, unknown>>(
          page.session,
          `({
            text: document.body.innerText,
            shellOutput: [...document.querySelectorAll(".event pre.out")].map((p) => p.innerText),
            badges: document.querySelectorAll(".badge.approval").length,
            head: Object.fromEntries([...document.querySelectorAll("dl.head dt")]
              .map((d) => [d.innerText, d.nextElementSibling.innerText])),
          })`,
        );
        // The header is the whole conversation's: its first prompt, every step.
        const head = said.head as Record<string, string>;
        assert.equal(head.task, "make first");
        assert.equal(head.steps, "5 in 2 files");
        assert.match(head.conversation, new RegExp(`2 files.*${earlier.id}, ${later.id}`));
        const text = String(said.text);
        assert.ok(text.includes("SUMMARY: first.txt made"), name);
        assert.match(text, /back to turn 1 \(checkpoint \d+\): conversation/);
        assert.ok(
          (said.shellOutput as string[]).some((o) => o.includes("between-turns")),
          JSON.stringify(said.shellOutput),
        );
        // The mode let every call through: no mark on any, one line in the header.
        assert.equal(said.badges, 0);
        assert.ok(!text.includes("allowed by mode never"), name);
        assert.match(text, /2 call\(s\) let through by mode never without asking/);
      }
    } finally {
      await mock.close();
    }
  },
});

Deno.test("report of a conversation: the time before a prompt is not a step's", async () => {
  await using dir = await tempDir();
  const base = ordinaryTrajectory();
  const t0 = Date.parse("2026-12-01T10:00:00.000Z");
  const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
  const steps = (base.agent_steps as Record<string, unknown>[]).slice(0, 3);
  // Turn 1: two steps, 2 s and 1 s; the user comes back an hour later; turn 2: one step of 4 s.
  const trajectory = {
    ...base,
    start_time: at(0),
    agent_steps: [
      { ...steps[0], step_number: 1, timestamp: at(2) },
      { ...steps[1], step_number: 2, timestamp: at(3) },
      { ...steps[2], step_number: 3, timestamp: at(3604) },
    ],
    events: [
      { kind: "prompt", text: "first prompt", time: at(0), at_steps: 0 },
      { kind: "prompt", text: "after an hour", time: at(3600), at_steps: 2 },
    ],
  };
  const path = join(dir.path, "trajectory_20261201_100000_abcdef.json");
  await Deno.writeTextFile(path, JSON.stringify(trajectory));
  const file = join(dir.path, "idle.html");
  await Deno.writeTextFile(file, await buildReport([path]));
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const page = await browser.open(pathToFileURL(file).href, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  const seen = await browser.evaluate<{ times: string[]; prompts: string[]; working: string }>(
    page.session,
    `({times: [...document.querySelectorAll(".step h4 .meta")].map((m) => m.innerText.split(" · ").at(-1)),
      prompts: [...document.querySelectorAll(".you .says")].map((p) => p.innerText),
      working: [...document.querySelectorAll("dl.head dt")].find((d) => d.innerText === "time working")
        ?.nextElementSibling.innerText ?? ""})`,
  );
  assert.deepEqual(seen.times, ["2.0 s", "1.0 s", "4.0 s"]);
  assert.deepEqual(seen.prompts, ["first prompt", "after an hour"]);
  assert.match(seen.working, /^7\.0 s over 2 prompts, the time between turns left out$/);
});

Deno.test("report of a batch: no histogram of three tasks; each bar of a larger one labelled", async () => {
  await using dir = await tempDir();
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const plots = async (n: number) => {
    const out = join(dir.path, `batch-${n}`);
    await writeBatch(out, syntheticTasks(n, 6));
    const file = join(dir.path, `batch-${n}.html`);
    const made = await runDeft(["report", out, "-o", file]);
    assert.equal(made.code, 0, made.stderr);
    // A page of a few KB says so, not "0.0 MB".
    assert.match(made.stderr, /\(\d+\.\d KB, /);
    const page = await browser.open(pathToFileURL(file).href, { scripts: true });
    assert.deepEqual(page.log.errors, []);
    await keep(`batch-${n}.png`, await browser.screenshot(page.session));
    return await browser.evaluate<
      { svgs: number; bars: number; counted: number; labels: string[][]; notes: string[] }
    >(
      page.session,
      `(() => { const figs = [...document.querySelectorAll(".plots figure")].slice(1);
        const bars = figs.flatMap((f) => [...f.querySelectorAll("rect")]).filter((r) => +r.getAttribute("height") > 0);
        return {svgs: figs.filter((f) => f.querySelector("svg")).length, bars: bars.length,
          counted: bars.filter((r) => r.nextElementSibling?.matches("text.count") &&
            r.nextElementSibling.getBoundingClientRect().height > 0).length,
          labels: figs.map((f) => [...f.querySelectorAll("text.bin")].map((t) => t.textContent)),
          notes: figs.map((f) => f.querySelector("p.note")?.innerText ?? "")}; })()`,
    );
  };
  const few = await plots(3);
  assert.equal(few.svgs, 0, JSON.stringify(few));
  assert.deepEqual(few.notes, [
    "3 task(s): too few for a histogram; the table above gives each one.",
    "3 task(s): too few for a histogram; the table above gives each one.",
  ]);
  const many = await plots(24);
  assert.equal(many.svgs, 2);
  assert.ok(many.bars > 0 && many.counted === many.bars, JSON.stringify(many));
  // Steps: one label per value; durations: the bins' edges.
  assert.deepEqual(many.labels[0], ["0", "1", "2", "3", "4", "5", "6"]);
  assert.ok(many.labels[1].length >= 3, JSON.stringify(many.labels));
});
