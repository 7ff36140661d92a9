import assert from "node:assert/strict";
import { rebuildConversation } from "../../src/trajectory/conversation.ts";
import { TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { emptyUsage, type LLMMessage, type LLMResponse } from "../../src/llm/types.ts";
import { tempDir } from "../helpers/temp.ts";

function response(content: string, calls: [string, string][] = []): LLMResponse {
  return {
    content,
    tool_calls: calls.map(([id, name]) => ({ call_id: id, name, arguments: {} })),
    usage: emptyUsage(),
    finish_reason: null,
    model: "m",
  };
}

Deno.test("a conversation recorded over two turns rebuilds whole, without repeats; a call cut short gets an error result", async () => {
  await using dir = await tempDir();
  const path = `${dir.path}/t.json`;
  const rec = new TrajectoryRecorder(path, { task: "t", provider: "p", model: "m", max_steps: 9 });
  const messages: LLMMessage[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "first" },
  ];
  const call = (r: LLMResponse) => {
    rec.recordInteraction({
      provider: "p",
      model: "m",
      input_messages: rec.unrecorded(messages),
      response: r,
      tools_available: [],
    });
    const answer: LLMMessage = { role: "assistant", content: r.content, tool_calls: r.tool_calls };
    messages.push(answer);
    rec.markRecorded(answer);
  };
  const first = response("", [["c1", "bash"]]);
  call(first);
  messages.push({ role: "tool", call_id: "c1", name: "bash", content: "out", is_error: false });
  rec.recordStep({
    step_number: 1,
    state: "completed",
    llm_response: first,
    tool_calls: first.tool_calls,
    tool_results: [{ call_id: "c1", name: "bash", success: true, result: "out", error: null }],
    reflection: null,
    error: null,
  });
  call(response("answer one"));
  messages.push({ role: "user", content: "second" });
  call(response("", [["c2", "bash"], ["c3", "bash"]]));
  // The run stopped before the step with c2 and c3 was recorded.

  const rebuilt = rebuildConversation(rec.data);
  assert.deepEqual(rebuilt.slice(0, messages.length), messages);
  assert.deepEqual(
    rebuilt.slice(messages.length).map((m) => [m.role, (m as { call_id: string }).call_id]),
    [
      ["tool", "c2"],
      ["tool", "c3"],
    ],
  );
  assert.match(rebuilt.at(-1)!.content, /stopped before this call finished/);
  assert.equal(rec.data.llm_interactions[2].input_messages.length, 1, "only the new prompt");
});
