/**
 * `deft acp` stopping: `session/cancel` mid-command answers the prompt `cancelled` and ends the
 * command's process; a second prompt while one runs is refused; a permission request the client
 * never answers is given up when the client cancels; the client closing stdin mid-turn ends every
 * tool process and the agent exits cleanly.
 */
import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { type AcpRun, updatesOf, withAcp, withDeadline } from "../../helpers/acp_client.ts";
import { eventually, pidsByCmdline } from "../../helpers/bash.ts";

/** Waits until `ready()` holds, failing after `ms`. */
async function until(
  ready: () => boolean | Promise<boolean>,
  ms: number,
  why: () => string,
): Promise<void> {
  const end = Date.now() + ms;
  while (!await ready()) {
    if (Date.now() > end) throw new Error(why());
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function open(ctx: acp.ClientContext, cwd: string): Promise<string> {
  await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return (await ctx.request("session/new", { cwd, mcpServers: [] })).sessionId;
}

Deno.test("acp: session/cancel mid-command stops the turn (cancelled) and ends the command's process", async () => {
  await using dir = await tempDir("deft-acp-cancel-");
  const marker = `31.${Date.now() % 100000}1`;
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: `sleep ${marker}; echo late` }]])),
    chatStream(chatText("After the cancel.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "never"],
      [],
      async (ctx, run: AcpRun) => {
        const sessionId = await open(ctx, dir.path);
        const prompt = ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "wait" }],
        });
        await until(
          async () => (await pidsByCmdline(`sleep ${marker}`)).length > 0,
          20_000,
          () => `the command never started\n${run.stderr()}`,
        );
        // A second prompt while one runs is refused, and the first goes on.
        await assert.rejects(
          ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] }),
          (e: { code?: number; message?: string }) => e.code === -32600,
        );
        const started = Date.now();
        await ctx.notify("session/cancel", { sessionId });
        const answer = await withDeadline(prompt, 10_000, () => `no answer\n${run.stderr()}`);
        const seconds = (Date.now() - started) / 1000;
        // The session takes the next prompt.
        const next = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "go on" }],
        });
        return { answer, seconds, next };
      },
    );
    assert.equal(value.answer.stopReason, "cancelled", run.stderr());
    assert.ok(value.seconds < 5, `the cancel took ${value.seconds} s`);
    assert.equal(value.next.stopReason, "end_turn", run.stderr());
    const gone = await eventually(async () =>
      (await pidsByCmdline(`sleep ${marker}`)).length === 0
    );
    assert.ok(gone, "the command's process is gone");
    assert.equal(code, 0, run.stderr());
    // The command never printed: its update is a failure, without its output.
    const [stopped] = updatesOf(run, "tool_call_update");
    assert.equal(stopped.status, "failed");
    assert.doesNotMatch(JSON.stringify(stopped.content), /late/);
    const text = updatesOf(run, "agent_message_chunk")
      .map((u) => (u.content as { text: string }).text).join("");
    assert.match(text, /After the cancel/);
  } finally {
    await mock.close();
  }
});

Deno.test("acp: a permission request never answered is given up when the client cancels", async () => {
  await using dir = await tempDir("deft-acp-cancel-");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: "touch never" }]])),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["never-answer"],
      async (ctx, run: AcpRun) => {
        const sessionId = await open(ctx, dir.path);
        const prompt = ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "touch" }],
        });
        await until(() => run.permissions.length > 0, 20_000, () => run.stderr());
        await ctx.notify("session/cancel", { sessionId });
        return await withDeadline(prompt, 10_000, () => `no answer\n${run.stderr()}`);
      },
    );
    assert.equal(value.stopReason, "cancelled", run.stderr());
    assert.equal(code, 0, run.stderr());
    await assert.rejects(Deno.stat(`${dir.path}/never`), Deno.errors.NotFound);
  } finally {
    await mock.close();
  }
});

Deno.test("acp: the client closing stdin mid-turn ends the command's process and deft exits 0", async () => {
  await using dir = await tempDir("deft-acp-cancel-");
  const marker = `32.${Date.now() % 100000}1`;
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: `sleep ${marker}` }]])),
  ]);
  try {
    const { code, run } = await withAcp(
      mock,
      ["--approval", "never"],
      [],
      async (ctx, run: AcpRun) => {
        const sessionId = await open(ctx, dir.path);
        void ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "x" }] })
          .catch(() => {});
        await until(
          async () => (await pidsByCmdline(`sleep ${marker}`)).length > 0,
          20_000,
          () => `the command never started\n${run.stderr()}`,
        );
        // withAcp closes stdin when this returns, the turn still running.
      },
    );
    assert.equal(code, 0, run.stderr());
    const gone = await eventually(async () =>
      (await pidsByCmdline(`sleep ${marker}`)).length === 0
    );
    assert.ok(gone, "the command's process is gone");
  } finally {
    await mock.close();
  }
});

Deno.test("acp: session/cancel while the model is answering stops the turn at once", async () => {
  await using dir = await tempDir("deft-acp-cancel-");
  const mock = MockLLM.start([{ ...chatText("Too late."), delayMs: 8_000 }]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "never"],
      [],
      async (ctx, run: AcpRun) => {
        const sessionId = await open(ctx, dir.path);
        const prompt = ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "slow" }],
        });
        await until(() => mock.requests.length > 0, 20_000, () => run.stderr());
        const started = Date.now();
        await ctx.notify("session/cancel", { sessionId });
        const answer = await withDeadline(prompt, 10_000, () => `no answer\n${run.stderr()}`);
        return { answer, seconds: (Date.now() - started) / 1000 };
      },
    );
    assert.equal(value.answer.stopReason, "cancelled", run.stderr());
    // The reply comes after 8 s: the turn did not wait for it.
    assert.ok(value.seconds < 4, `the cancel took ${value.seconds} s`);
    assert.equal(code, 0, run.stderr());
    assert.doesNotMatch(JSON.stringify(run.updates), /Too late/);
  } finally {
    await mock.close();
  }
});
