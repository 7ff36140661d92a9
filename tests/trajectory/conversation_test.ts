import assert from "node:assert/strict";
import {
  latestSession,
  listSessions,
  rebuildConversation,
} from "../../src/trajectory/conversation.ts";
import { tempDir } from "../helpers/temp.ts";
import { TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { emptyUsage, type LLMMessage, type LLMResponse } from "../../src/llm/types.ts";

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

Deno.test("listing: a /init helper and a conversation compacted into a newer one are left out of the user's conversations, kept in the full list, marked", async () => {
  await using state = await tempDir();
  const saved = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  try {
    const dir = `${state.path}/deft/trajectories`;
    let clock = Date.parse("2026-01-01T00:00:00Z");
    const record = async (id: string, extra: Record<string, unknown>, answer = `done ${id}`) => {
      const path = `${dir}/trajectory_${id}.json`;
      const rec = new TrajectoryRecorder(path, {
        task: `task ${id}`,
        working_dir: "/ws",
        provider: "p",
        model: "m",
        max_steps: 9,
        session_id: id,
        ...extra,
      });
      rec.finalize(true, answer);
      // Listed by modification time: each file newer than the one before.
      clock += 60_000;
      await Deno.utime(path, clock / 1000, clock / 1000);
      return path;
    };
    const first = await record("first", {});
    await record("init", { helper_of: { command: "/init", session_id: "first", path: first } });
    const before = await record("before", {});
    await record("after", { resumed_from: { session_id: "before", path: before, by: "compact" } });
    await record("init2", { helper_of: { command: "/init", session_id: null, path: null } });

    const mine = await listSessions("/ws", 20, "conversations");
    assert.deepEqual(mine.map((s) => s.id), ["after", "first"]);
    assert.equal(mine[0].last_reply, "done after");
    assert.equal((await latestSession("/ws"))?.id, "after", "--continue skips the helper");

    const all = await listSessions("/ws");
    assert.deepEqual(all.map((s) => s.id), ["init2", "after", "before", "init", "first"]);
    assert.equal(all[2].compacted_into, "after");
    assert.deepEqual(all[3].helper_of, { command: "/init", session_id: "first", path: first });
  } finally {
    if (saved === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", saved);
  }
});

Deno.test("a rewind cuts the rebuilt conversation; turns after it follow the cut; a later rewind brings the cut turns back", () => {
  const interaction = (user: string, answer: string) => ({
    timestamp: "t",
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: user } as LLMMessage],
    response: response(answer),
    tools_available: [],
  });
  // deno-lint-ignore no-explicit-any
  const data: any = {
    llm_interactions: [interaction("one", "1"), interaction("two", "2"), interaction("three", "3")],
    agent_steps: [],
  };
  const said = () => rebuildConversation(data).map((m) => m.content);
  assert.deepEqual(said(), ["one", "1", "two", "2", "three", "3"]);
  data.rewinds = [{ at_interactions: 3, ranges: [[0, 1]] }];
  assert.deepEqual(said(), ["one", "1"]);
  data.llm_interactions.push(interaction("four", "4"));
  assert.deepEqual(said(), ["one", "1", "four", "4"]);
  data.rewinds.push({ at_interactions: 4, ranges: [[0, 3]] });
  assert.deepEqual(said(), ["one", "1", "two", "2", "three", "3"]);
});

Deno.test("a resumed conversation holds the last step's huge result bounded, as the live turn did", async () => {
  await using dir = await tempDir();
  const rec = new TrajectoryRecorder(`${dir.path}/t.json`, {
    task: "t",
    provider: "p",
    model: "m",
    max_steps: 9,
  });
  const first = response("", [["c1", "mcp_dump"]]);
  rec.recordInteraction({
    provider: "p",
    model: "m",
    input_messages: [{ role: "user", content: "dump it" }],
    response: first,
    tools_available: [],
  });
  const huge = "A" + "y".repeat(1_000_000) + "Z";
  rec.recordStep({
    step_number: 1,
    state: "completed",
    llm_response: first,
    tool_calls: first.tool_calls,
    tool_results: [{ call_id: "c1", name: "mcp_dump", success: true, result: huge, error: null }],
    reflection: null,
    error: null,
  });
  const last = rebuildConversation(rec.data).at(-1)!;
  assert.equal(last.role, "tool");
  const text = last.content as string;
  assert.ok(text.length < 100_300, `kept ${text.length} characters`);
  assert.ok(text.startsWith("Ay") && text.endsWith("yZ"));
  assert.match(text, /\[… 900002 characters of this result were dropped here/);
});
