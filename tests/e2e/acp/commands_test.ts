/**
 * Deft's slash commands in an editor, driven by the ACP SDK's own client against the mock model:
 * a new session advertises /compact /undo /rewind /init /cost /status; `/cost` and `/status`
 * answer without a model request; `/compact` makes one summary request and the next prompt goes
 * on from the summary; `/undo` takes back the last turn's edit; `/rewind` lists the checkpoints
 * (no question put to the editor) and goes back to the one named; a terminal-only command is
 * refused, never sent to the model.
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { BUGGY, makeBuggyRepo } from "../../helpers/repo.ts";
import {
  type AcpRun,
  type ClientFiles,
  updatesOf,
  withAcp,
  withDeadline,
} from "../../helpers/acp_client.ts";
import { trustedHomeWith } from "../../helpers/deft.ts";

/** The agent's text since update `from`. */
function said(run: AcpRun, from: number): string {
  return run.updates.slice(from).map((n) => n.update as unknown as Record<string, unknown>)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => (u.content as { text: string }).text).join("");
}

/** Sends `text` as a prompt; the answer's stop reason and what the agent said meanwhile. */
async function prompt(ctx: acp.ClientContext, run: AcpRun, sessionId: string, text: string) {
  const from = run.updates.length;
  const { stopReason } = await ctx.request("session/prompt", {
    sessionId,
    prompt: [{ type: "text", text }],
  });
  return { stopReason, text: said(run, from) };
}

/** Waits for the session's `available_commands_update` (sent just after session/new's answer). */
async function advertised(run: AcpRun): Promise<string[]> {
  return await withDeadline(
    (async () => {
      for (;;) {
        const [update] = updatesOf(run, "available_commands_update");
        if (update) return (update.availableCommands as { name: string }[]).map((c) => c.name);
        await new Promise((r) => setTimeout(r, 20));
      }
    })(),
    15_000,
    () => `no available_commands_update\n${run.stderr()}`,
  );
}

Deno.test("acp: the slash commands are advertised; /cost and /status ask no model, /compact once", async () => {
  await using dir = await tempDir("deft-acp-commands-");
  const mock = MockLLM.start([
    chatStream(chatText("First answer.")),
    chatText("SUMMARY: the user said hello."),
    chatStream(chatText("Going on.")),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      assert.deepEqual(await advertised(run), [
        "compact",
        "undo",
        "rewind",
        "init",
        "cost",
        "status",
      ]);

      let answer = await prompt(ctx, run, sessionId, "/cost");
      assert.equal(answer.stopReason, "end_turn");
      assert.match(answer.text, /no model calls yet/);
      assert.equal(mock.requests.length, 0, "/cost reached the model");

      answer = await prompt(ctx, run, sessionId, "hello");
      assert.equal(answer.text, "First answer.");
      assert.equal(mock.requests.length, 1);

      // The mock reports 50 prompt and 10 completion tokens a request.
      answer = await prompt(ctx, run, sessionId, "/cost");
      assert.match(answer.text, /turn 1 +50 in, 10 out/);
      assert.match(answer.text, /total +50 in, 10 out/);
      answer = await prompt(ctx, run, sessionId, "/status");
      assert.match(answer.text, /model: +mock-model/);
      assert.match(answer.text, /conversation: +\d+ message\(s\), 1 turn\(s\)/);
      assert.match(answer.text, /tokens used: +60/);
      // A command of the terminal only is refused, not sent on.
      answer = await prompt(ctx, run, sessionId, "/exit");
      assert.match(answer.text, /not of the editor/);
      assert.equal(mock.requests.length, 1, "a command reached the model");

      answer = await prompt(ctx, run, sessionId, "/compact");
      assert.equal(answer.stopReason, "end_turn");
      assert.match(answer.text, /compacted the conversation/);
      assert.equal(mock.requests.length, 2, "/compact made not exactly one request");
      const summarise = JSON.stringify(mock.requests[1].body.messages);
      assert.match(summarise, /You summarise a conversation/);
      assert.match(summarise, /First answer\./);

      // The next prompt goes on from the summary, not from the turns it replaced.
      answer = await prompt(ctx, run, sessionId, "what next?");
      assert.equal(answer.text, "Going on.");
      const next = JSON.stringify(mock.requests[2].body.messages);
      assert.match(next, /SUMMARY: the user said hello\.[\s\S]*what next\?/);
      assert.doesNotMatch(next, /First answer\./);
    });
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});

Deno.test("acp: /undo takes back the last turn's edit without asking the model", async () => {
  await using dir = await tempDir("deft-acp-undo-");
  const file = `${dir.path}/notes.txt`;
  await Deno.writeTextFile(file, "before\n");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: file,
      old_str: "before",
      new_str: "after",
    }]])),
    chatStream(chatText("Edited.")),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      await prompt(ctx, run, sessionId, "edit the notes");
      assert.equal(await Deno.readTextFile(file), "after\n");
      const answer = await prompt(ctx, run, sessionId, "/undo");
      assert.match(answer.text, /reverted an edit of .*notes\.txt/);
      assert.equal(await Deno.readTextFile(file), "before\n");
      assert.equal(mock.requests.length, 2, "/undo reached the model");
    });
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});

Deno.test("acp with client fs: /undo passes the session's hooks: a PreToolUse deny keeps the buffer's edit", async () => {
  await using dir = await tempDir("deft-acp-undo-hook-");
  const file = `${dir.path}/notes.txt`;
  await Deno.writeTextFile(file, "before\n");
  const home = await trustedHomeWith(
    "deft-acp-undo-home-",
    (home) =>
      `hooks:\n  PreToolUse:\n    - hooks:\n        - { type: command, command: "bash ${home}/deny.sh" }\n`,
    {
      "deny.sh": `#!/bin/bash\ninput=$(cat)\ncase "$input" in\n  *'"command":"undo_edit"'*) ` +
        `echo "undo-deny: no undoing here" >&2; exit 2 ;;\nesac\nexit 0\n`,
    },
  );
  const files: ClientFiles = { buffers: new Map([[file, "before\n"]]), reads: [], writes: [] };
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: file,
      old_str: "before",
      new_str: "after",
    }]])),
    chatStream(chatText("Edited.")),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      await prompt(ctx, run, sessionId, "edit the notes");
      assert.equal(files.buffers.get(file), "after\n");
      const answer = await prompt(ctx, run, sessionId, "/undo");
      assert.match(answer.text, /✗ .*notes\.txt: .*undo-deny: no undoing here/);
      assert.equal(files.buffers.get(file), "after\n", "the hook did not stop /undo");
      assert.equal(files.writes.length, 1);
    }, { home, fs: files });
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});

Deno.test("acp: /rewind lists the checkpoints, then goes back to the one named; nothing asked", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]])),
    chatStream(chatText("Fixed it.")),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: repo, mcpServers: [] });
      await prompt(ctx, run, sessionId, "fix calc");
      assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY.replace("a - b", "a + b"));
      let answer = await prompt(ctx, run, sessionId, "/rewind");
      assert.equal(answer.stopReason, "end_turn");
      assert.match(answer.text, /Checkpoints \(number, time UTC, files changed, label\):/);
      assert.match(answer.text, /go back with \/rewind N/);
      assert.equal(run.permissions.length, 0);
      answer = await prompt(ctx, run, sessionId, "/rewind 0 files");
      assert.match(answer.text, /rewound the files to checkpoint 0/);
      assert.equal(await Deno.readTextFile(`${repo}/calc.py`), BUGGY);
      assert.equal(mock.requests.length, 2, "/rewind reached the model");
    });
    assert.equal(code, 0, run.stderr());
  } finally {
    await mock.close();
  }
});

Deno.test("acp: /init drafts AGENTS.md in one agent turn shown as tool calls", async () => {
  await using dir = await tempDir("deft-acp-init-");
  const mock = MockLLM.start([
    chatStream(chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${dir.path}/AGENTS.md`,
      file_text: "# Agents\n\nRun the tests with `make test`.\n",
    }]])),
    chatStream(chatText("Wrote AGENTS.md.")),
  ]);
  try {
    const { code, run } = await withAcp(mock, ["--approval", "never"], [], async (ctx, run) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      const answer = await prompt(ctx, run, sessionId, "/init");
      assert.equal(answer.stopReason, "end_turn");
      assert.match(answer.text, /drafted .*AGENTS\.md: review it/);
      assert.match(JSON.stringify(mock.requests[0].body.messages), /Write a draft AGENTS\.md/);
      assert.deepEqual(updatesOf(run, "tool_call").map((c) => c.kind), ["edit"]);
    });
    assert.equal(code, 0, run.stderr());
    assert.match(await Deno.readTextFile(`${dir.path}/AGENTS.md`), /make test/);
  } finally {
    await mock.close();
  }
});
