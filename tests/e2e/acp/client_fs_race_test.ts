/**
 * Issue 48, findings 1 and 2: an editor's `fs/read_text_file` and `fs/write_text_file` open the
 * path Deft confined again, by name and outside the sandbox. The model starts, through its own
 * bash tool, a background script that keeps swapping folder `d` for a link to a folder outside
 * the workspace, then edits and views `d/f.txt` through the client many times. The client is the
 * ACP SDK's own client app answering from the disk as an editor does for a file it has not open
 * (following links). Nothing may land in the outside file, and its secret must never reach the
 * model (nor the editor's view of the calls).
 */
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { chatStream, chatText, chatToolCalls, type MockReply } from "../../helpers/mock_llm.ts";
import { MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { collectStderr, spawnAcp, withDeadline } from "../../helpers/acp_client.ts";

const EDIT = "str_replace_based_edit_tool";
/** Attempts of each kind: without the freeze, 1–16 of 40 edits and of 30 views lost here. */
const EDITS = 60;
const VIEWS = 40;

Deno.test({
  name: "acp fs: a racer swapping a folder for a link never leads the editor outside",
  // The agent's shells and a racer end with it; the mock's server is closed below.
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using ws = await tempDir("deft-acp-race-ws-");
  await using outside = await tempDir("deft-acp-race-out-");
  const secret = `OUTSIDE-SECRET-${crypto.randomUUID()}`;
  const away = `${outside.path}/f.txt`;
  await Deno.writeTextFile(away, `${secret}\n`);
  await Deno.mkdir(`${ws.path}/d`);
  const file = `${ws.path}/d/f.txt`;
  await Deno.writeTextFile(file, "inside\n");
  await Deno.symlink(outside.path, `${ws.path}/d.link`);
  // The folder is swapped for the link and back, then left a few milliseconds (a pipe nobody
  // writes to times the pause without a process), so most calls find the folder and go on.
  const loop = "exec {z}<> <(:); while :; do mv -T d d.in; mv -T d.link d; mv -T d d.link; " +
    "mv -T d.in d; read -t 0.02 -u $z; done";
  const racer = `cd ${ws.path} && (${loop}) >/dev/null 2>&1 & echo started`;
  const replies: MockReply[] = [chatStream(chatToolCalls([["bash", { command: racer }]]))];
  for (let i = 0; i < EDITS; i++) {
    replies.push(chatStream(chatToolCalls([[EDIT, {
      command: "insert",
      path: file,
      insert_line: 0,
      new_str: `edit ${i}`,
    }]])));
  }
  for (let i = 0; i < VIEWS; i++) {
    replies.push(chatStream(chatToolCalls([[EDIT, { command: "view", path: file }]])));
  }
  replies.push(chatStream(chatText("Done.")));
  const mock = MockLLM.start(replies);
  const child = await spawnAcp(mock, [
    "--approval",
    "never",
    "--sandbox",
    "workspace-write",
    "--max-steps",
    String(EDITS + VIEWS + 10),
  ]);
  const stderr = collectStderr(child);
  const requests = { reads: 0, writes: 0 };
  const updates: string[] = [];
  try {
    const app = acp.client({ name: "deft-race-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push(JSON.stringify(params.update));
      })
      .onRequest(acp.methods.client.session.requestPermission, () => ({
        outcome: { outcome: "selected", optionId: "allow_once" },
      }))
      // As an editor answers for a file it has not open: the disk, by name, following links.
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
        requests.reads++;
        return { content: await Deno.readTextFile(params.path) };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
        requests.writes++;
        await Deno.writeTextFile(params.path, params.content);
        return {};
      });
    const result = await withDeadline(
      app.connectWith(acp.ndJsonStream(child.stdin, child.stdout), async (ctx) => {
        await ctx.request("initialize", {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
        });
        const session = await ctx.request("session/new", { cwd: ws.path, mcpServers: [] });
        return await ctx.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "edit d/f.txt" }],
        });
      }),
      600_000,
      () => `the turn did not end\n${stderr()}`,
    );
    assert.equal(result.stopReason, "end_turn", stderr());
    // The racer ran: bash said so, and every call after it was answered.
    assert.equal(mock.requests.length, EDITS + VIEWS + 2, stderr());
    // The client was used (not every call fell back to the disk editor).
    assert.ok(requests.reads > 0 && requests.writes > 0, JSON.stringify(requests));
    // Nothing landed outside: no edit, nothing rewritten.
    const landed = (await Deno.readTextFile(away)).split("\n").filter((l) => l.startsWith("edit "));
    assert.equal(landed.length, 0, `${landed.length} of ${EDITS} edits landed outside`);
    assert.equal(await Deno.readTextFile(away), `${secret}\n`);
    // The outside secret reached neither the model nor the editor's view of the calls.
    const last = mock.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    const leaked = last.messages.filter((m) =>
      m.role === "tool" && JSON.stringify(m.content).includes(secret)
    );
    assert.equal(leaked.length, 0, `${leaked.length} tool results showed the model the secret`);
    for (const request of mock.requests) {
      assert.ok(!JSON.stringify(request.body).includes(secret), "the model saw the secret");
    }
    assert.ok(!updates.some((u) => u.includes(secret)), "the editor was shown the secret");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* gone already */ }
    await child.status;
    await mock.close();
  }
});
