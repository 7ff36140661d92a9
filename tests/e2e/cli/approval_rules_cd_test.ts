/**
 * `cd DIR && COMMAND`, the model's most common command shape (issue 52): on a real terminal
 * `[a]lways` is offered for COMMAND when DIR is within the workspace, saved for the project, and
 * the next session's `cd DIR && COMMAND` runs unasked.
 */
import assert from "node:assert/strict";
import { mockRunArgs } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

function oneCommand(command: string): MockLLM {
  return MockLLM.start([chatToolCalls([["bash", { command }]]), chatText("Done.")]);
}

Deno.test("rules (pty): always for `cd sub && touch x` saves `allow $ touch`; the next session's cd && touch runs unasked", async () => {
  await using homeTemp = await tempDir();
  await using projectTemp = await tempDir();
  const home = homeTemp.path;
  const project = await Deno.realPath(projectTemp.path);
  await Deno.mkdir(`${project}/sub`);
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  const commands = ["--approval", "commands"];
  let mock = oneCommand("cd sub && touch made1");
  try {
    const r = await runDeftInPty(mockRunArgs(mock, "make it", project, { extra: commands }), [
      { expect: "\\[a\\]lways for `touch` commands[\\s\\S]*approve> ", send: "a\r" },
      { expect: "this project[\\s\\S]*always> ", send: "p\r" },
      { expect: "Done\\." },
    ], { cwd: project, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.match(out, /saved the rule `allow \$ touch`/);
    await Deno.stat(`${project}/sub/made1`);
  } finally {
    await mock.close();
  }
  mock = oneCommand(`cd ${project}/sub && touch made2`);
  try {
    const r = await runDeftInPty(mockRunArgs(mock, "make it", project, { extra: commands }), [
      { expect: "Done\\." },
    ], { cwd: project, env });
    const out = plain(r.output);
    assert.equal(r.failed, null, out);
    assert.doesNotMatch(out, /Approve this/);
    await Deno.stat(`${project}/sub/made2`);
  } finally {
    await mock.close();
  }
});
