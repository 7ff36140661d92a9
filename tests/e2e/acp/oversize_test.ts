/**
 * Issue 48, finding 8: a 40 MB embedded resource in an ACP prompt made `deft acp` close its output
 * and exit 0 with no word (the SDK's stream ended the connection on its first over-size line).
 * Now the prompt gets a JSON-RPC error saying what was too large, and the same connection serves
 * the next prompt.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { withAcp } from "../../helpers/acp_client.ts";

const HUGE = 40 * 1024 * 1024;

Deno.test("acp: a 40 MB embedded resource gets a JSON-RPC error and the session goes on", async () => {
  await using dir = await tempDir("deft-acp-huge-");
  const mock = MockLLM.start([chatStream(chatText("Still here."))]);
  try {
    const { value, code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      let refusal: { code?: number; message?: string } | undefined;
      try {
        await ctx.request("session/prompt", {
          sessionId,
          prompt: [
            { type: "text", text: "summarise this log" },
            {
              type: "resource",
              resource: { uri: `file://${dir.path}/big.log`, text: "x".repeat(HUGE) },
            },
          ],
        });
      } catch (e) {
        refusal = e as { code?: number; message?: string };
      }
      const answer = await ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "are you there?" }],
      });
      return { refusal, answer };
    });
    assert.equal(value.refusal?.code, -32600, JSON.stringify(value.refusal));
    assert.match(value.refusal?.message ?? "", /40\.0 MB, larger than the 32\.0 MB/);
    assert.match(value.refusal?.message ?? "", /resource link/);
    assert.equal(value.answer.stopReason, "end_turn", run.stderr());
    // The model was asked once: for the second prompt only.
    assert.equal(mock.requests.length, 1);
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});
