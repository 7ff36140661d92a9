/**
 * A background shell over ACP (the SDK's client, the mock model, real bash): its bash call stays
 * an open tool call after it answered with its shell id, each `bash_output` adds what it read to
 * that call's content while it shows `in_progress`, and the read that finds it ended closes the
 * call with its outcome (here `failed`: it exited 3).
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { updatesOf, withAcp } from "../../helpers/acp_client.ts";

/** A foreground command that waits (at most 20 s) for `file`, then a little for the pipes. */
function waitFor(file: string): string {
  return `for i in $(seq 200); do [ -e ${file} ] && break; sleep 0.1; done; sleep 1; echo waited`;
}

Deno.test("acp: a background shell is a tool call whose output grows with each bash_output, then ends with its status", async () => {
  await using dir = await tempDir("deft-acp-bg-");
  const mark = `mark-${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const command = `echo ${mark}-first; touch started; ` +
    `while [ ! -e go ]; do sleep 0.1; done; echo ${mark}-second; touch ended; sh -c 'exit 3'`;
  const shell = (output: string) => /^shell_id: (\S+)/.exec(output)?.[1];
  let shellId = "";
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command, run_in_background: true }]]),
    chatToolCalls([["bash", { command: waitFor("started") }]]),
  ], (req) => {
    // The shell's id is in the first tool result: the reads name it.
    const messages = req.body.messages as { role: string; content: string }[];
    shellId ||= shell(messages.find((m) => m.role === "tool")?.content ?? "") ?? "";
    const step = messages.filter((m) => m.role === "tool").length;
    switch (step) {
      case 2:
        return chatToolCalls([["bash_output", { shell_id: shellId }]]);
      case 3:
        return chatToolCalls([["bash", { command: `touch go; ${waitFor("ended")}` }]]);
      case 4:
        return chatToolCalls([["bash_output", { shell_id: shellId }]]);
      default:
        return chatText("Done.");
    }
  });
  try {
    const { value, code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const session = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      return await ctx.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "run it in the background" }],
      });
    });
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.match(shellId, /^bg-[0-9a-f]{24}$/, run.stderr());
    const start = updatesOf(run, "tool_call").find((c) =>
      (c.rawInput as Record<string, unknown>).run_in_background === true
    );
    assert.ok(start, run.stderr());
    const updates = updatesOf(run, "tool_call_update")
      .filter((u) => u.toolCallId === start.toolCallId)
      .map((u) => ({ status: u.status, text: JSON.stringify(u.content) }));
    assert.deepEqual(
      updates.map((u) => u.status),
      ["in_progress", "in_progress", "failed"],
      JSON.stringify(updates),
    );
    // Answered with its id; then the first read's output; then the second's, both kept.
    assert.match(updates[0].text, new RegExp(`shell_id: ${shellId}`));
    assert.doesNotMatch(updates[0].text, new RegExp(`${mark}-first`));
    assert.match(updates[1].text, new RegExp(`${mark}-first`));
    assert.doesNotMatch(updates[1].text, new RegExp(`${mark}-second`));
    assert.match(updates[2].text, new RegExp(`${mark}-first\\\\n${mark}-second`));
  } finally {
    await mock.close();
  }
});
