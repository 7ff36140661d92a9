/**
 * `--approval-rules FILE` on the bare `deft` launch line (a conversation) means what it means on
 * `deft run`: the policy file's rules decide, and the decision names the rule.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

Deno.test('rules: deft --approval-rules FILE "PROMPT" (interactive) denies by the policy file', async () => {
  await using homeTemp = await tempDir();
  await using repoTemp = await tempDir();
  const home = homeTemp.path;
  const repo = repoTemp.path;
  const policy = `${home}/policy.yaml`;
  await Deno.writeTextFile(policy, "deny:\n  - $ touch\n");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "touch denied-by-policy" }]]),
    chatText("Could not."),
  ]);
  try {
    const r = await runDeft(
      [
        "--approval-rules",
        policy,
        "--approval",
        "never",
        "-w",
        repo,
        ...mockModelArgs(mock),
        "touch the file please",
      ],
      { cwd: home, env: { HOME: home }, stdin: "exit\n" },
    );
    assert.equal(r.code, 0, r.stderr);
    await assert.rejects(
      Deno.stat(`${repo}/denied-by-policy`),
      "the policy's deny was not applied",
    );
    const told = JSON.stringify(mock.requests[1].body.messages);
    assert.match(told, /\$ touch/);
  } finally {
    await mock.close();
  }
});
