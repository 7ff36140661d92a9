/**
 * `deft acp` cancelling a turn whose model asked for several calls: `session/cancel` during the
 * first leaves the others unrun (issue 53's loop gap: the loop once went on to calls 2 and 3),
 * each answered "Not run", and the session takes the next prompt with a valid conversation.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type AcpRun, withAcp, withDeadline } from "../../helpers/acp_client.ts";
import { pidsByCmdline } from "../../helpers/bash.ts";

// deno-lint-ignore no-explicit-any
type Message = any;

Deno.test("acp: session/cancel during call 1 of 3 leaves calls 2 and 3 unrun, every call answered", async () => {
  await using dir = await tempDir("deft-acp-cancel-calls-");
  const marker = `32.${Date.now() % 100000}1`;
  const mock = MockLLM.start([
    chatStream(chatToolCalls([
      ["bash", { command: `sleep ${marker}` }],
      ["bash", { command: `touch ${dir.path}/a` }],
      ["bash", { command: `touch ${dir.path}/b` }],
    ])),
    chatStream(chatText("Next turn answered.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "never"],
      [],
      async (ctx: acp.ClientContext, run: AcpRun) => {
        await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
        const prompt = ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "three calls" }],
        });
        const end = Date.now() + 20_000;
        while ((await pidsByCmdline(`sleep ${marker}`)).length === 0) {
          if (Date.now() > end) throw new Error(`the first call never started\n${run.stderr()}`);
          await new Promise((r) => setTimeout(r, 50));
        }
        await ctx.notify("session/cancel", { sessionId });
        const answer = await withDeadline(prompt, 10_000, () => `no answer\n${run.stderr()}`);
        // Past the first call's end: a call that ran late would have made its file by now.
        await new Promise((r) => setTimeout(r, 1000));
        const next = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "next" }],
        });
        return { answer, next };
      },
    );
    assert.equal(value.answer.stopReason, "cancelled", run.stderr());
    assert.equal(value.next.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    for (const name of ["a", "b"]) {
      assert.equal(
        await Deno.stat(`${dir.path}/${name}`).then(() => true, () => false),
        false,
        `${name} must not exist: its call came after the cancel`,
      );
    }
    const messages: Message[] = mock.requests.at(-1)!.body.messages;
    const asked = messages.find((m) => m.tool_calls?.length === 3);
    assert.ok(asked, "the cancelled step's calls are in the conversation");
    const answers = messages.filter((m) => m.role === "tool");
    assert.deepEqual(
      answers.map((m) => m.tool_call_id),
      asked.tool_calls.map((c: Message) => c.id),
      "every call id is answered, in order",
    );
    for (const unrun of answers.slice(1)) {
      assert.match(String(unrun.content), /Not run: the turn was interrupted/);
    }
  } finally {
    await mock.close();
  }
});
