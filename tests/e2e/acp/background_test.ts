/**
 * A background shell over ACP (the SDK's client, the mock model, real bash): its bash call stays
 * an open tool call after it answered with its shell id, each `bash_output` adds what it read to
 * that call's content while it shows `in_progress`, and the read that finds it ended closes the
 * call with its outcome (here `failed`: it exited 3). An editor's `/rewind` ends the shells of the
 * turns it takes back, as the terminal's does.
 */
import assert from "node:assert/strict";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { updatesOf, withAcp } from "../../helpers/acp_client.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

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

Deno.test("acp: /rewind kills the background shells the turns it takes back started, not the others", async () => {
  const repo = await makeBuggyRepo();
  const needle = (n: string) => `sleep 9${n}.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const [a, b] = [needle("1"), needle("2")];
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: a, run_in_background: true }]]),
    chatText("A started."),
    chatToolCalls([["bash", { command: b, run_in_background: true }]]),
    chatText("B started."),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: repo, mcpServers: [] });
      const prompt = (text: string) =>
        ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      await prompt("start A");
      await prompt("start B");
      assert.equal((await pidsByCmdline(a)).length, 1, run.stderr());
      assert.equal((await pidsByCmdline(b)).length, 1, run.stderr());
      const from = run.updates.length;
      await prompt("/rewind 1 both");
      const said = run.updates.slice(from).map((n) =>
        n.update as unknown as Record<string, unknown>
      )
        .filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => (u.content as { text: string }).text).join("");
      // B is gone while the session still runs; A runs on.
      assert.ok(await eventually(async () => (await pidsByCmdline(b)).length === 0), run.stderr());
      assert.equal((await pidsByCmdline(a)).length, 1, run.stderr());
      assert.match(said, /rewound the files and the conversation to checkpoint 1/, said);
      assert.match(
        said,
        new RegExp(`ended the background shells[^\\n]*\\n {2}bg-\\S+ {2}${b}`),
        said,
      );
    });
    assert.equal(code, 0, run.stderr());
    // The session's end took A with it.
    assert.ok(await eventually(async () => (await pidsByCmdline(a)).length === 0));
  } finally {
    await mock.close();
  }
});
