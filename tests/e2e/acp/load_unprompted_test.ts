/**
 * A session created over ACP and never prompted can be loaded by a later `deft acp` (as acpx
 * does: `session/new` in one process, the prompt in the next): it loads empty, advertises the
 * commands, its first turn records its trajectory under its own id, and a later load goes on
 * from that turn. Loaded from another folder it is refused, saying where it was opened.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: a session that was created but never prompted loads in the next process", async () => {
  await using dir = await tempDir("deft-acp-unprompted-");
  await using other = await tempDir("deft-acp-unprompted-other-");
  const home = await tempDirUntilExit("deft-acp-home-");
  const mock = MockLLM.start([
    chatStream(chatText("First turn.")),
    chatStream(chatText("Second turn.")),
  ]);
  const init = { protocolVersion: 1, clientCapabilities: {} };
  try {
    const created = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", init);
      return (await ctx.request("session/new", { cwd: dir.path, mcpServers: [] })).sessionId;
    }, { home });
    assert.equal(created.code, 0, created.run.stderr());
    const id = created.value;
    const workspace = await Deno.realPath(dir.path);

    const loaded = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", init);
      await assert.rejects(
        ctx.request("session/load", { sessionId: id, cwd: other.path, mcpServers: [] }),
        (e: { code?: number; message?: string }) =>
          e.code === -32602 && e.message!.includes(`was opened in ${workspace}`),
      );
      const answer = await ctx.request("session/load", {
        sessionId: id,
        cwd: dir.path,
        mcpServers: [],
      });
      assert.equal(
        answer.configOptions?.find((o) => o.id === "model")?.currentValue,
        "mock-model",
      );
      return await ctx.request("session/prompt", {
        sessionId: id,
        prompt: [{ type: "text", text: "first question" }],
      });
    }, { home });
    assert.equal(loaded.value.stopReason, "end_turn", loaded.run.stderr());
    assert.equal(updatesOf(loaded.run, "available_commands_update").length, 1);
    // Its first turn is recorded under its own id.
    const trajectory = `${home}/state/deft/trajectories/trajectory_${id}.json`;
    assert.match(await Deno.readTextFile(trajectory), /first question/);

    const again = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", init);
      await ctx.request("session/load", { sessionId: id, cwd: dir.path, mcpServers: [] });
      return await ctx.request("session/prompt", {
        sessionId: id,
        prompt: [{ type: "text", text: "second question" }],
      });
    }, { home });
    assert.equal(again.value.stopReason, "end_turn", again.run.stderr());
    assert.match(
      JSON.stringify(mock.requests[1].body.messages),
      /first question[\s\S]*First turn\.[\s\S]*second question/,
    );
  } finally {
    await mock.close();
  }
});
