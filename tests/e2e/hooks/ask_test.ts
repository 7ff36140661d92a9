/** A PreToolUse hook's `ask`: the ordinary approval question, even where the mode would not ask. */
import assert from "node:assert/strict";
import { mockRunArgs } from "../../helpers/deft.ts";
import { plain, runDeftInPty } from "../../helpers/pty.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("a hook that answers ask: a reader the mode lets through is asked about; a no refuses it", async () => {
  await using wsTemp = await tempDir("deft-hook-ask-");
  await using homeTemp = await tempDir("deft-home-");
  const ws = wsTemp.path;
  const home = homeTemp.path;
  await Deno.writeTextFile(`${ws}/notes.txt`, "hello\n");
  await Deno.mkdir(`${home}/.config/deft`, { recursive: true });
  await Deno.writeTextFile(
    `${home}/.config/deft/config.yaml`,
    `hooks:\n  PreToolUse:\n    - matcher: bash\n      hooks:\n        - type: command\n` +
      `          command: "cat >/dev/null; echo '{\\"hookSpecificOutput\\":{\\"permissionDecision\\":\\"ask\\"}}'"\n`,
  );
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `cat ${ws}/notes.txt` }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  const traj = `${home}/rec.json`;
  let run;
  try {
    run = await runDeftInPty(
      mockRunArgs(mock, "read notes", ws, {
        extra: ["--approval", "commands", "-t", traj],
      }),
      [{ expect: "Approve this command\\?[\\s\\S]*notes\\.txt[\\s\\S]*approve> ", send: "n\r" }],
      { cwd: home, env: { HOME: home } },
    );
  } finally {
    await mock.close();
  }
  const out = plain(run.output);
  assert.equal(run.failed, null, out);
  assert.equal(run.code, 0, out);
  const trajectory = JSON.parse(await Deno.readTextFile(traj));
  const approval = trajectory.agent_steps[0].tool_results[0].approval;
  assert.equal(approval.decision, "deny");
  assert.equal(approval.decided_by, "user");
  assert.match(approval.hook.name, /permissionDecision/);
});
