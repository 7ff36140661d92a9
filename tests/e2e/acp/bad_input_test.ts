/**
 * `deft acp` given bad input answers with a JSON-RPC error (or nothing, for a notification) and
 * goes on serving: malformed JSON, an unknown method, a prompt for an unknown session, a relative
 * or missing or absent `cwd`, content Deft does not take, a cancel for nothing.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { withAcp } from "../../helpers/acp_client.ts";

/** The JSON-RPC error code a rejected request carries. */
async function codeOf(request: Promise<unknown>): Promise<number | string> {
  try {
    await request;
    return "no error";
  } catch (e) {
    return (e as { code?: number }).code ?? String(e);
  }
}

Deno.test("acp: bad input gets a JSON-RPC error and the agent goes on serving", async () => {
  await using dir = await tempDir("deft-acp-bad-");
  const mock = MockLLM.start([chatStream(chatText("Still here."))]);
  try {
    const { value, code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      const codes: Record<string, number | string> = {};
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      codes.unknownMethod = await codeOf(ctx.request("deft/no_such_method", {}));
      codes.unknownSession = await codeOf(ctx.request("session/prompt", {
        sessionId: "no-such-session",
        prompt: [{ type: "text", text: "hi" }],
      }));
      // Relative to what? Even one that names a folder (the agent's own) is refused.
      codes.relativeCwd = await codeOf(ctx.request("session/new", { cwd: ".", mcpServers: [] }));
      codes.missingCwd = await codeOf(
        // deno-lint-ignore no-explicit-any
        ctx.request("session/new", { mcpServers: [] } as any),
      );
      codes.absentCwd = await codeOf(
        ctx.request("session/new", { cwd: `${dir.path}/not-there`, mcpServers: [] }),
      );
      // A cancel for nothing: no session, then a session with no turn running.
      await ctx.notify("session/cancel", { sessionId: "no-such-session" });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      await ctx.notify("session/cancel", { sessionId });
      codes.image = await codeOf(ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "image", mimeType: "image/png", data: "AAAA" }],
      }));
      const answer = await ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "are you there?" }],
      });
      return { codes, answer };
    }, { raw: "{this is not json\n[]\n" });
    assert.deepEqual(value.codes, {
      unknownMethod: -32601,
      unknownSession: -32602,
      relativeCwd: -32602,
      missingCwd: -32602,
      absentCwd: -32602,
      image: -32602,
    }, run.stderr());
    assert.equal(value.answer.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});
