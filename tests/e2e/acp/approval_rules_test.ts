/**
 * `deft acp --approval-rules FILE`: the policy file decides as in `deft run` (a deny refuses the
 * call without asking the client), and the session's SessionEnd hooks run when the client leaves.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { trustedHomeWith } from "../../helpers/deft.ts";
import { withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: --approval-rules denies by the policy file unasked; SessionEnd runs when the client leaves", async () => {
  await using dir = await tempDir("deft-acp-rules-");
  const home = await trustedHomeWith(
    "deft-acp-rules-home-",
    (home) =>
      `hooks:\n  SessionEnd:\n    - hooks:\n        - { type: command, command: "cat > ${home}/end.json", sandbox: none }\n`,
    { "policy.yaml": "deny:\n  - $ touch\n" },
  );
  const policy = `${home}/policy.yaml`;
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: "touch by-acp" }]])),
    chatStream(chatText("Refused.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands", "--approval-rules", policy],
      ["allow_once"],
      async (ctx) => {
        await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const session = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
        return await ctx.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "touch it" }],
        });
      },
      { home },
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.equal(run.permissions.length, 0, "the client was asked about a denied call");
    await assert.rejects(Deno.stat(`${dir.path}/by-acp`));
    assert.match(JSON.stringify(mock.requests[1].body.messages), /\$ touch/);
    const end = JSON.parse(await Deno.readTextFile(`${home}/end.json`));
    assert.equal(end.hook_event_name, "SessionEnd");
    assert.equal(end.reason, "other");
  } finally {
    await mock.close();
  }
});
