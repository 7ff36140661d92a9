/**
 * The MCP servers a client passes in `session/new` start like the config's: their tools are the
 * session's (`mcp__<server>__<tool>`), a call runs on the server, and it is asked about as any
 * tool Deft does not know.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { stdioFixture } from "../../helpers/mcp_fixtures.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: the client's stdio MCP server starts and its tool runs (asked about first)", async () => {
  await using dir = await tempDir("deft-acp-mcp-");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["mcp__fx__echo", { text: "hello-mcp", times: 2 }]])),
    chatStream(chatText("Echoed.")),
  ]);
  const fixture = stdioFixture();
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["allow_once"],
      (ctx) =>
        promptNewSession(ctx, dir.path, "echo", [
          { name: "fx", command: fixture.command!, args: fixture.args ?? [], env: [] },
        ]),
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    // The model was offered the server's tool.
    const offered = JSON.stringify(mock.requests[0].body.tools);
    assert.match(offered, /mcp__fx__echo/);
    assert.equal(run.permissions.length, 1, run.stderr());
    const [done] = updatesOf(run, "tool_call_update");
    assert.equal(done.status, "completed", run.stderr());
    assert.match(JSON.stringify(done.content), /hello-mcp[\s\S]*hello-mcp/);
  } finally {
    await mock.close();
  }
});
