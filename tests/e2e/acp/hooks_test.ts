/**
 * `deft acp` keeps the session's hooks whatever the client offers: a PreToolUse hook that exits 2
 * blocks a bash command and an edit in approval mode `never`, with and without the client's file
 * system (which puts an editor over the client's buffers in the session's place).
 */
import assert from "node:assert/strict";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { trustedHomeWith } from "../../helpers/deft.ts";
import { type ClientFiles, withAcp } from "../../helpers/acp_client.ts";

const EDIT = "str_replace_based_edit_tool";

/**
 * A HOME whose config has a PreToolUse hook on every tool that refuses with exit 2, noting each
 * call it saw in `seen` (inside the workspace: a hook may run in the session's sandbox).
 */
async function denyingHome(seen: string): Promise<string> {
  return await trustedHomeWith(
    "deft-acp-hooks-home-",
    (home) =>
      `hooks:\n  PreToolUse:\n    - matcher: ".*"\n      hooks:\n` +
      `        - { type: command, command: "bash ${home}/deny.sh" }\n`,
    {
      "deny.sh": `#!/bin/bash\ncat >> ${seen}\necho >> ${seen}\n` +
        `echo "the project's hook refuses every call" >&2\nexit 2\n`,
    },
  );
}

for (const withFs of [false, true]) {
  Deno.test(`acp ${withFs ? "with" : "without"} client fs: a PreToolUse hook's exit 2 blocks bash and the editor in mode never`, async () => {
    await using dir = await tempDir("deft-acp-hooks-");
    const seenFile = `${dir.path}/.hook-seen.jsonl`;
    const home = await denyingHome(seenFile);
    const file = `${dir.path}/notes.txt`;
    const files: ClientFiles = { buffers: new Map(), reads: [], writes: [] };
    const mock = MockLLM.start([
      chatStream(chatToolCalls([
        ["bash", { command: "touch made-by-bash" }],
        [EDIT, { command: "create", path: file, file_text: "hello\n" }],
      ])),
      chatStream(chatText("Both refused.")),
    ]);
    try {
      const { value, code, run } = await withAcp(
        mock,
        ["--approval", "never"],
        [],
        async (ctx) => {
          await ctx.request("initialize", {
            protocolVersion: 1,
            clientCapabilities: withFs ? { fs: { readTextFile: true, writeTextFile: true } } : {},
          });
          const session = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
          return await ctx.request("session/prompt", {
            sessionId: session.sessionId,
            prompt: [{ type: "text", text: "make the files" }],
          });
        },
        { home, ...(withFs ? { fs: files } : {}) },
      );
      assert.equal(value.stopReason, "end_turn", run.stderr());
      assert.equal(code, 0, run.stderr());
      // The hook saw both calls, and neither ran: no file on disk, nothing written to the client.
      const seen = await Deno.readTextFile(seenFile);
      assert.match(seen, /"tool_name":"bash"/, seen);
      assert.match(seen, /"tool_name":"str_replace_based_edit_tool"/, seen);
      await assert.rejects(Deno.stat(`${dir.path}/made-by-bash`), "the hook let bash run");
      await assert.rejects(Deno.stat(file), "the hook let the edit run");
      assert.deepEqual(files.writes, []);
      const told = JSON.stringify(mock.requests[1].body.messages);
      assert.equal(told.match(/the project's hook refuses every call/g)?.length, 2, told);
    } finally {
      await mock.close();
    }
  });
}
