/**
 * `deft acp`'s approvals: a command the approval mode asks about becomes a
 * `session/request_permission` for that tool call; "allow once" runs it, "reject once" does not
 * and the model reads the refusal as on a terminal; "reject always" refuses the same scope later
 * without asking; `session/set_mode never` stops asking; an edit is asked with its diff.
 *
 * Promises of ACP's approvals, each with the test that guards it (here unless a file is named):
 * - allow once runs the call; reject once refuses it and the model reads why: "acp: a permission
 *   request answered allow, then reject …"
 * - reject always refuses the same scope later unasked; `set_mode never` stops asking: "acp:
 *   reject always refuses the same command prefix unasked …"
 * - an edit is asked with the whole change as a diff: "acp: an edit asked about in mode all …"
 * - allow always covers the command prefix as the terminal's `a`: tests/acp/permission_test.ts
 *   "acp permission: allow always covers the command prefix …"
 * - no answer refuses the call: tests/acp/permission_test.ts "acp permission: no answer (cancelled)
 *   refuses the call"; a request never answered is given up when the client cancels:
 *   cancel_test.ts "acp: a permission request never answered is given up …"
 * - repository trust is never put to the client: trust_test.ts; tests/acp/permission_test.ts
 *   "acp permission: a question other than an approval is not put to the client"
 * - a policy file's deny refuses unasked: approval_rules_test.ts
 * - "allow always" where no "always" was offered runs the call once: permission_promises_test.ts
 *   "acp promise: allow always where none was offered runs the call once"
 * - the permission request's title, command and diff are masked: permission_promises_test.ts
 *   "acp promise: the permission request's title, command and diff are masked"
 * - streamed text is masked: tests/acp/console_test.ts "acp console: secrets are masked in
 *   streamed text"
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";

Deno.test("acp: a permission request answered allow, then reject; the model reads the refusal", async () => {
  await using dir = await tempDir("deft-acp-perm-");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: "touch a1" }]])),
    chatStream(chatToolCalls([["bash", { command: "touch b1" }]])),
    chatStream(chatText("Done.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["allow_once", "reject_once"],
      async (ctx) => {
        await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const session = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
        assert.equal(session.modes?.currentModeId, "commands");
        return await ctx.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "touch two files" }],
        });
      },
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.equal(run.permissions.length, 2, run.stderr());
    // Each question names the tool call it is about, with the four kinds of answer.
    const calls = updatesOf(run, "tool_call");
    assert.deepEqual(
      run.permissions.map((p) => p.toolCall.toolCallId),
      calls.map((c) => c.toolCallId),
    );
    assert.deepEqual(
      run.permissions[0].options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once", "reject_always"],
    );
    assert.match(JSON.stringify(run.permissions[1].toolCall.content), /touch b1/);
    await Deno.stat(`${dir.path}/a1`);
    await assert.rejects(Deno.stat(`${dir.path}/b1`), Deno.errors.NotFound);
    // The refusal reaches the model as the tool's error, as it does on a terminal.
    const third = JSON.stringify(mock.requests[2].body.messages);
    assert.match(third, /The user denied this command/);
    const done = updatesOf(run, "tool_call_update").map((u) => u.status);
    assert.deepEqual(done, ["completed", "failed"]);
  } finally {
    await mock.close();
  }
});

Deno.test("acp: reject always refuses the same command prefix unasked; set_mode never stops asking", async () => {
  await using dir = await tempDir("deft-acp-perm-");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: "touch c1" }]])),
    chatStream(chatToolCalls([["bash", { command: "touch c2" }]])),
    chatStream(chatText("Gave up.")),
    chatStream(chatToolCalls([["bash", { command: "mkdir d1" }]])),
    chatStream(chatText("Made it.")),
  ]);
  try {
    const { code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["reject_always"],
      async (ctx) => {
        await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
        const first = await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "touch" }],
        });
        assert.equal(first.stopReason, "end_turn");
        await ctx.request("session/set_mode", { sessionId, modeId: "never" });
        await assert.rejects(
          ctx.request("session/set_mode", { sessionId, modeId: "sometimes" }),
          (e: { code?: number }) => e.code === -32602,
        );
        return await ctx.request("session/prompt", {
          sessionId,
          prompt: [{ type: "text", text: "mkdir" }],
        });
      },
    );
    assert.equal(code, 0, run.stderr());
    assert.equal(run.permissions.length, 1, run.stderr());
    await assert.rejects(Deno.stat(`${dir.path}/c1`), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(`${dir.path}/c2`), Deno.errors.NotFound);
    assert.match(JSON.stringify(mock.requests[2].body.messages), /The user denied this command/);
    await Deno.stat(`${dir.path}/d1`);
  } finally {
    await mock.close();
  }
});

Deno.test("acp: an edit asked about in mode all shows the client the whole change as a diff", async () => {
  await using dir = await tempDir("deft-acp-perm-");
  const file = `${dir.path}/calc.py`;
  await Deno.writeTextFile(file, "def add(a, b):\n    return a - b\n");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: file,
      old_str: "a - b",
      new_str: "a + b",
    }]])),
    chatStream(chatText("Fixed.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "all"],
      ["allow_once"],
      (ctx) => promptNewSession(ctx, dir.path, "fix"),
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.equal(run.permissions.length, 1, run.stderr());
    const [diff] = run.permissions[0].toolCall.content ?? [];
    assert.deepEqual(diff, {
      type: "diff",
      path: file,
      oldText: "def add(a, b):\n    return a - b\n",
      newText: "def add(a, b):\n    return a + b\n",
    });
    assert.equal(run.permissions[0].toolCall.kind, "edit");
    assert.equal(await Deno.readTextFile(file), "def add(a, b):\n    return a + b\n");
  } finally {
    await mock.close();
  }
});
