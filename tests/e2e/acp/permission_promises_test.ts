/**
 * Promises of `deft acp`'s permission requests (issue 50), each asserted by its effect:
 *
 * - "allow always" answered where no "always" was offered runs the call once — never "no
 *   answer", never remembered: "acp promise: allow always where none was offered runs the call
 *   once".
 * - The permission request's text is masked: its title, the command and the edit's diff never
 *   carry a secret of Deft's environment (a `.env`-style variable) or a known key shape:
 *   "acp promise: the permission request's title, command and diff are masked"; so is the
 *   request about a tool that cannot describe its calls (an MCP server's), shown as the call was
 *   made: "acp promise: the permission request about an MCP tool's call is masked".
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { promptNewSession, updatesOf, withAcp } from "../../helpers/acp_client.ts";
import { stdioFixture } from "../../helpers/mcp_fixtures.ts";

Deno.test("acp promise: allow always where none was offered runs the call once", async () => {
  await using dir = await tempDir("deft-acp-always-");
  // Shell syntax (`>`): no command prefix, so "always" is not offered.
  const command = "echo made >> out.txt";
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command }]])),
    chatStream(chatToolCalls([["bash", { command }]])),
    chatStream(chatText("Done.")),
  ]);
  try {
    const { value, code, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["allow_always", "reject_once"],
      (ctx) => promptNewSession(ctx, dir.path, "write it twice"),
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(code, 0, run.stderr());
    assert.deepEqual(
      run.permissions[0].options.map((o) => o.kind),
      ["allow_once", "reject_once", "reject_always"],
    );
    // The first call ran (once); "always" covered nothing, so the second was asked again.
    const out = await Deno.readTextFile(`${dir.path}/out.txt`).catch(() => "(nothing: never ran)");
    assert.equal(out, "made\n", "the call answered allow always did not run once");
    assert.equal(run.permissions.length, 2);
    assert.deepEqual(updatesOf(run, "tool_call_update").map((u) => u.status), [
      "completed",
      "failed",
    ]);
    assert.doesNotMatch(JSON.stringify(mock.requests[1].body.messages), /no answer/);
  } finally {
    await mock.close();
  }
});

Deno.test("acp promise: the permission request's title, command and diff are masked", async () => {
  await using dir = await tempDir("deft-acp-mask-");
  // A `.env`-style variable of Deft's environment, and a key of a well-known shape.
  const secret = "dotenv-style-secret-4711";
  const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz";
  const file = `${dir.path}/settings.txt`;
  await Deno.writeTextFile(file, `deploy: ${secret}\n`);
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["bash", { command: `curl -u ${secret} -H 'x-key: ${key}' x` }]])),
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: file,
      old_str: "deploy:",
      new_str: `deploy (${key}):`,
    }]])),
    chatStream(chatText("Done.")),
  ]);
  try {
    const { value, run } = await withAcp(
      mock,
      ["--approval", "all"],
      ["reject_once", "reject_once"],
      (ctx) => promptNewSession(ctx, dir.path, "use the key"),
      { env: { DEPLOY_TOKEN: secret } },
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(run.permissions.length, 2, run.stderr());
    const [asked, edit] = run.permissions.map((p) => p.toolCall);
    // What was asked is there, with the secrets hidden.
    assert.match(asked.title ?? "", /curl -u \*\*\*/);
    assert.match(JSON.stringify(asked.content), /curl -u \*\*\* -H 'x-key: \*\*\*' x/);
    const diff = (edit.content ?? []).find((c) => c.type === "diff") as
      | { oldText: string; newText: string }
      | undefined;
    assert.ok(diff, JSON.stringify(edit));
    assert.equal(diff.oldText, "deploy: ***\n");
    assert.equal(diff.newText, "deploy (***): ***\n");
    for (const text of [secret, key, key.slice(0, 20)]) {
      assert.ok(!JSON.stringify(run.permissions).includes(text), `the client was sent ${text}`);
    }
  } finally {
    await mock.close();
  }
});

Deno.test("acp promise: the permission request about an MCP tool's call is masked", async () => {
  await using dir = await tempDir("deft-acp-mcp-mask-");
  const secret = "dotenv-style-secret-4712";
  const key = "sk-ant-api03-zyxwvutsrqponmlkjihgfedcba";
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["mcp__fx__echo", { text: `${secret} ${key}`, times: 1 }]])),
    chatStream(chatText("Done.")),
  ]);
  const fixture = stdioFixture();
  try {
    const { value, run } = await withAcp(
      mock,
      ["--approval", "commands"],
      ["reject_once"],
      (ctx) =>
        promptNewSession(ctx, dir.path, "echo the key", [
          { name: "fx", command: fixture.command!, args: fixture.args ?? [], env: [] },
        ]),
      { env: { DEPLOY_TOKEN: secret } },
    );
    assert.equal(value.stopReason, "end_turn", run.stderr());
    assert.equal(run.permissions.length, 1, run.stderr());
    // What was asked is there (the call as made), with the secrets hidden.
    const asked = JSON.stringify(run.permissions[0].toolCall);
    assert.match(asked, /mcp__fx__echo[\s\S]*\*\*\* \*\*\*/, asked);
    for (const text of [secret, key, key.slice(0, 20)]) {
      assert.ok(!JSON.stringify(run.permissions).includes(text), `the client was sent ${text}`);
    }
  } finally {
    await mock.close();
  }
});
