/**
 * `deft acp` driven by the SDK's client app against the streaming mock model: a turn that views,
 * edits and runs a command streams its text and tool calls as session updates (kinds, locations,
 * the edit as a diff that matches the file's bytes, the command's output) and ends with end_turn.
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { updatesOf, withAcp } from "../../helpers/acp_client.ts";
import { runDeft } from "../../helpers/deft.ts";

Deno.test("acp: a turn views, edits and runs a command as session updates, then end_turn", async () => {
  await using dir = await tempDir("deft-acp-turn-");
  const file = `${dir.path}/calc.py`;
  await Deno.writeTextFile(file, "def add(a, b):\n    return a - b\n");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", { command: "view", path: file }]])),
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: file,
      old_str: "return a - b",
      new_str: "return a + b",
    }]])),
    chatStream(chatToolCalls([["bash", { command: "echo ran-$((6*7))" }]])),
    chatStream(chatText("Fixed the sign.")),
  ]);
  const home = await tempDirUntilExit("deft-acp-home-");
  try {
    const { value, code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      const init = await ctx.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: {},
      });
      assert.equal(init.protocolVersion, 1);
      assert.equal(init.agentCapabilities?.loadSession, true);
      assert.equal(init.agentCapabilities?.promptCapabilities?.embeddedContext, true);
      const session = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      const answer = await ctx.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "fix calc.py" }],
      });
      return { ...answer, sessionId: session.sessionId };
    }, { home });
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    const calls = updatesOf(run, "tool_call");
    assert.deepEqual(calls.map((c) => c.kind), ["read", "edit", "execute"], run.stderr());
    assert.deepEqual(calls[1].locations, [{ path: file }]);
    const done = updatesOf(run, "tool_call_update");
    assert.deepEqual(done.map((u) => u.status), ["completed", "completed", "completed"]);
    // The edit as a diff block whose texts are the file's bytes before and after.
    const [diff] = done[1].content as Record<string, unknown>[];
    assert.deepEqual(diff, {
      type: "diff",
      path: file,
      oldText: "def add(a, b):\n    return a - b\n",
      newText: await Deno.readTextFile(file),
    });
    assert.equal(await Deno.readTextFile(file), "def add(a, b):\n    return a + b\n");
    const output = JSON.stringify(done[2].content);
    assert.match(output, /ran-42/);
    const text = updatesOf(run, "agent_message_chunk")
      .map((u) => (u.content as { text: string }).text).join("");
    assert.equal(text, "Fixed the sign.");
    // Nothing but protocol on stdout: every line a JSON-RPC 2.0 message.
    assert.ok(run.stdoutLines.length > 10);
    for (const line of run.stdoutLines) assert.equal(JSON.parse(line).jsonrpc, "2.0", line);
    // The session's trajectory is the ordinary format: `deft run --replay` replays it.
    const trajectory = `${home}/state/deft/trajectories/trajectory_${value.sessionId}.json`;
    // Its session id is the ACP session's.
    assert.equal(JSON.parse(await Deno.readTextFile(trajectory)).session_id, value.sessionId);
    await Deno.writeTextFile(file, "def add(a, b):\n    return a - b\n");
    const replay = await runDeft(["run", "--replay", trajectory, "-w", dir.path], {
      cwd: home,
      env: { HOME: home, XDG_STATE_HOME: `${home}/replay-state` },
    });
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(await Deno.readTextFile(file), "def add(a, b):\n    return a + b\n");
  } finally {
    await mock.close();
  }
});
