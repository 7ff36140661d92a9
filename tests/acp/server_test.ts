/**
 * `session/load`'s replay: a rebuilt conversation becomes the updates that show it — the user's
 * and the agent's messages, each tool call with its kind and title, and how it ended.
 */
import assert from "node:assert/strict";
import { replayUpdates } from "../../src/acp/server.ts";

Deno.test("acp replay: messages, tool calls and their results become session updates", () => {
  const updates = replayUpdates([
    { role: "system", content: "the system prompt" },
    { role: "user", content: "fix it" },
    {
      role: "assistant",
      content: "Looking.",
      tool_calls: [{ call_id: "c1", name: "bash", arguments: { command: "ls" } }],
    },
    { role: "tool", call_id: "c1", name: "bash", content: "a.py", is_error: false },
    { role: "assistant", content: "Done." },
  ]);
  assert.deepEqual(updates.map((u) => u.sessionUpdate), [
    "user_message_chunk",
    "agent_message_chunk",
    "tool_call",
    "tool_call_update",
    "agent_message_chunk",
  ]);
  assert.equal(updates[2].kind, "execute");
  assert.equal(updates[2].title, "$ ls");
  assert.equal(updates[3].status, "completed");
  assert.match(JSON.stringify(updates[3].content), /a\.py/);
  assert.doesNotMatch(JSON.stringify(updates), /the system prompt/);
});
