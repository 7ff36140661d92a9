/**
 * The report's background-shell lanes in headless Chromium, from a real run (mock model, real
 * bash): one shell read while running and stopped with kill_shell, one read after it exited 3.
 * Each gets a lane with its bar and its events (started, read, killed or ended) and how it ended.
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Chromium } from "../../helpers/chromium.ts";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("report in Chromium: background shells are lanes of started, read, killed and ended", async () => {
  await using dir = await tempDir();
  await using workspace = await tempDir();
  const mark = `lane-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const ids: string[] = [];
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `echo ${mark}-a; sleep 600`, run_in_background: true }]]),
    chatToolCalls([["bash", {
      command: `sh -c 'echo ${mark}-b; echo more; exit 3'`,
      run_in_background: true,
    }]]),
    chatToolCalls([["bash", { command: "sleep 2; echo waited" }]]),
  ], (req) => {
    const tools = (req.body.messages as { role: string; content: string }[])
      .filter((m) => m.role === "tool");
    for (const m of tools.slice(ids.length, 2)) ids.push(/^shell_id: (\S+)/.exec(m.content)![1]);
    switch (tools.length) {
      case 3:
        return chatToolCalls([["bash_output", { shell_id: ids[0] }]]);
      case 4:
        return chatToolCalls([["bash_output", { shell_id: ids[1] }]]);
      case 5:
        return chatToolCalls([["kill_shell", { shell_id: ids[0] }]]);
      default:
        return chatText("Done.");
    }
  });
  const trajectory = join(dir.path, "trajectory.json");
  try {
    const run = await runMocked(mock, "serve and stop", workspace.path, {
      extra: ["--approval", "never", "-t", trajectory],
      cwd: dir.path,
      env: { HOME: dir.path },
    });
    assert.equal(run.code, 0, run.stderr);
  } finally {
    await mock.close();
  }
  const file = join(dir.path, "run.html");
  const made = await runDeft(["report", trajectory, "-o", file], { env: { HOME: dir.path } });
  assert.equal(made.code, 0, made.stderr);
  await using browser = await Chromium.launch(join(dir.path, "profile"));
  const page = await browser.open(pathToFileURL(file).href, { scripts: true });
  assert.deepEqual(page.log.errors, []);
  assert.deepEqual(page.log.requests, []);
  const lanes = await browser.evaluate<{ text: string; bar: boolean; marks: number }[]>(
    page.session,
    `[...document.querySelectorAll(".lane")].map((lane) => ({
      text: lane.innerText,
      bar: lane.querySelector("svg.lane-bar")?.checkVisibility() ?? false,
      marks: lane.querySelectorAll("svg.lane-bar circle").length,
    }))`,
  );
  assert.equal(lanes.length, 2, JSON.stringify(lanes));
  const [a, b] = lanes;
  assert.ok(a.text.includes(ids[0]) && b.text.includes(ids[1]), JSON.stringify(lanes));
  // A: started, read while running (one line), killed with kill_shell.
  assert.match(a.text, /killed/);
  assert.match(a.text, new RegExp(`echo ${mark}-a; sleep 600`));
  assert.match(
    a.text,
    /\d\d:\d\d:\d\d \(\+0\.0 s\) step 1: started\n\d\d:\d\d:\d\d \(\+\d+\.\d s\) step 4: read: running, 1 new line\(s\)\n.*step 6: killed with kill_shell/,
  );
  // B: started, read after it exited 3 (two lines), and its end.
  assert.match(b.text, /exited 3/);
  assert.match(
    b.text,
    /step 2: started\n.*step 5: read: exited \(exit code 3\), 2 new line\(s\)\n.*step 5: ended: exit code 3/,
  );
  assert.deepEqual(lanes.map((l) => [l.bar, l.marks]), [[true, 3], [true, 3]]);
});
