/**
 * `session/load` continues a Deft session from an earlier `deft acp`: the history is replayed as
 * session updates and the next prompt goes on with the same conversation; loaded again, the
 * session goes on from its latest turn. `session/list` names Deft's sessions of a folder.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: session/load replays the history and continues the conversation", async () => {
  await using dir = await tempDir("deft-acp-load-");
  const home = await tempDirUntilExit("deft-acp-home-");
  const mock = MockLLM.start([
    chatStream(chatText("The answer is 42.")),
    chatStream(chatText("You asked about the answer.")),
    chatStream(chatText("Third time.")),
  ]);
  try {
    const first = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      await ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "what is the answer?" }],
      });
      return sessionId;
    }, { home });
    assert.equal(first.code, 0, first.run.stderr());
    const second = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      const init = await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      assert.equal(init.agentCapabilities?.loadSession, true);
      // session/list names the earlier session, with the task as its title.
      const listed = await ctx.request("session/list", { cwd: dir.path });
      assert.equal(listed.sessions.length, 1);
      assert.equal(listed.sessions[0].cwd, dir.path);
      assert.match(listed.sessions[0].title ?? "", /what is the answer\?/);
      await assert.rejects(
        ctx.request("session/list", { cwd: "relative" }),
        (e: { code?: number }) => e.code === -32602,
      );
      await assert.rejects(
        ctx.request("session/load", { sessionId: "nope", cwd: dir.path, mcpServers: [] }),
        (e: { code?: number }) => e.code === -32602,
      );
      await ctx.request("session/load", { sessionId: first.value, cwd: dir.path, mcpServers: [] });
      return await ctx.request("session/prompt", {
        sessionId: first.value,
        prompt: [{ type: "text", text: "what did I ask?" }],
      });
    }, { home });
    assert.equal(second.value.stopReason, "end_turn", second.run.stderr());
    const replayed = [
      ...updatesOf(second.run, "user_message_chunk"),
      ...updatesOf(second.run, "agent_message_chunk"),
    ].map((u) => (u.content as { text: string }).text).join("\n");
    assert.match(replayed, /what is the answer\?/);
    assert.match(replayed, /The answer is 42\./);
    // The model sees the earlier turn before the new prompt.
    const messages = JSON.stringify(mock.requests[1].body.messages);
    assert.match(messages, /The answer is 42\.[\s\S]*what did I ask\?/);
    // The earlier session's trajectory is kept; the new turn's names it.
    const dirOf = `${home}/state/deft/trajectories`;
    const original = `${dirOf}/trajectory_${first.value}.json`;
    assert.match(await Deno.readTextFile(original), /The answer is 42\./);
    assert.doesNotMatch(await Deno.readTextFile(original), /what did I ask/);
    const files = [...Deno.readDirSync(dirOf)].map((e) => `${dirOf}/${e.name}`);
    const next = files.filter((f) => f !== original);
    assert.equal(next.length, 1, files.join("\n"));
    const continued = JSON.parse(await Deno.readTextFile(next[0]));
    assert.equal(continued.resumed_from?.path, original);
    // Loaded again later, the session goes on from its latest turn, not its first.
    const third = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request("session/load", { sessionId: first.value, cwd: dir.path, mcpServers: [] });
      return await ctx.request("session/prompt", {
        sessionId: first.value,
        prompt: [{ type: "text", text: "and now?" }],
      });
    }, { home });
    assert.equal(third.value.stopReason, "end_turn", third.run.stderr());
    assert.match(
      JSON.stringify(mock.requests[2].body.messages),
      /The answer is 42\.[\s\S]*You asked about the answer\.[\s\S]*and now\?/,
    );
  } finally {
    await mock.close();
  }
});
