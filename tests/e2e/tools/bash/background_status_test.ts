/**
 * A background shell the model starts in `deft interactive` (mock model): `/status` lists it with
 * its id, status and command, and leaving the session ends it.
 */
import assert from "node:assert/strict";
import { interactiveOnStdin } from "../../../helpers/deft.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { chatText, chatToolCalls, MockLLM } from "../../../helpers/mock_llm.ts";
import { tempDir } from "../../../helpers/temp.ts";

Deno.test("background (interactive): /status lists the model's background shells; leaving ends them", async () => {
  await using homeTemp = await tempDir();
  await using workspace = await tempDir();
  const needle = `905.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `sleep ${needle}`, run_in_background: true }]]),
    chatText("Started."),
  ]);
  try {
    const r = await interactiveOnStdin(workspace.path, mock, "start a sleeper\n/status\nexit\n", {
      args: ["--approval", "never"],
      cwd: workspace.path,
      env: { HOME: homeTemp.path },
    });
    assert.equal(r.code, 0, r.stderr);
    const status = r.stderr + r.stdout;
    assert.match(
      status,
      new RegExp(
        `background:\\n {2}bg-[0-9a-f]{24} {2}running {2}0 bytes unread {2}started ` +
          `\\d\\d:\\d\\d:\\d\\d {2}sleep ${needle.replace(".", "\\.")}`,
      ),
    );
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length === 0));
  } finally {
    await mock.close();
  }
});
