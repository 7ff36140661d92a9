import assert from "node:assert/strict";
import { ContextManager } from "../../src/agent/context.ts";
import type { LLMMessage } from "../../src/llm/types.ts";

function conversation(steps: number, outputChars: number): LLMMessage[] {
  const messages: LLMMessage[] = [
    { role: "system", content: "system prompt" },
    { role: "user", content: "the task" },
  ];
  for (let i = 0; i < steps; i++) {
    messages.push({
      role: "assistant",
      content: `step ${i}`,
      tool_calls: [{ call_id: `c${i}`, name: "bash", arguments: { command: `cmd ${i}` } }],
    });
    messages.push({
      role: "tool",
      call_id: `c${i}`,
      name: "bash",
      content: `${i}:`.padEnd(outputChars, "x"),
      is_error: false,
    });
  }
  return messages;
}

Deno.test("under the window nothing changes", () => {
  const context = new ContextManager({ window: 100_000 });
  const messages = conversation(5, 1000);
  const before = structuredClone(messages);
  assert.deepEqual(context.fit(messages, 6), []);
  assert.deepEqual(messages, before);
});

Deno.test("old tool outputs are shortened first; recent steps, system and task stay whole", () => {
  const context = new ContextManager({ window: 8000, reserve: 1000 });
  const messages = conversation(20, 3000);
  const events = context.fit(messages, 21);
  assert.ok(events.length > 0);
  assert.ok(context.estimate(messages) <= context.budget);
  assert.equal(messages[0].content, "system prompt");
  assert.equal(messages[1].content, "the task");
  const last = messages.at(-1)!;
  assert.equal(last.content.length, 3000, "the most recent output stays whole");
  const firstTool = messages.find((m) => m.role === "tool")!;
  assert.match(firstTool.content, /characters removed to fit the context window/);
  assert.ok(events.every((e) => e.after_chars < e.before_chars));
  assert.equal(events[0].action, "shortened");
  assert.equal(events[0].call_id, "c0");
});

Deno.test("huge tool-call arguments of old steps are shortened too, staying valid objects", () => {
  const context = new ContextManager({ window: 4000, reserve: 500 });
  const messages = conversation(6, 100);
  const big = messages[2] as Extract<LLMMessage, { role: "assistant" }>;
  big.tool_calls![0].arguments = { command: "create", file_text: "y".repeat(40_000) };
  context.fit(messages, 7);
  const shortened = (messages[2] as typeof big).tool_calls![0].arguments as Record<string, string>;
  assert.equal(shortened.command, "create");
  assert.ok(shortened.file_text.length < 2000);
  assert.ok(context.estimate(messages) <= context.budget);
});

Deno.test("the window is a hard limit: even the last output is clipped when it alone is too big", () => {
  const context = new ContextManager({ window: 2000, reserve: 200 });
  const messages = conversation(2, 50_000);
  context.fit(messages, 3);
  assert.ok(context.estimate(messages) <= context.budget);
});

Deno.test("calibration follows the provider's reported token counts", () => {
  const context = new ContextManager({ window: 10_000 });
  const messages = conversation(1, 4000);
  const estimated = context.estimate(messages);
  context.calibrate(estimated, estimated * 2);
  assert.ok(Math.abs(context.estimate(messages) - estimated * 2) <= 1);
});

Deno.test("when shortening is not enough, the oldest steps go whole, with a note, calls paired", () => {
  const context = new ContextManager({ window: 3000, reserve: 300 });
  const messages = conversation(200, 2000);
  const events = context.fit(messages, 201);
  assert.ok(context.estimate(messages) <= context.budget);
  assert.ok(events.some((e) => e.action === "removed"));
  assert.equal(messages[0].role, "system");
  assert.equal(messages[1].content, "the task");
  const removed = events.filter((e) => e.action === "removed").length;
  assert.equal(messages[2].content.startsWith(`[Context note: ${removed} earlier step(s)`), true);
  // Every remaining tool result still follows the call that asked for it.
  const asked = new Set(
    messages.flatMap((m) => m.role === "assistant" ? m.tool_calls!.map((c) => c.call_id) : []),
  );
  for (const m of messages) if (m.role === "tool") assert.ok(asked.has(m.call_id), m.call_id);
  assert.equal(messages.at(-1)!.content.length, 2000, "the newest output stays whole");
  // A later fit adds to the same note rather than a second one.
  messages.push(...conversation(50, 2000).slice(2));
  context.fit(messages, 251);
  assert.equal(messages.filter((m) => m.content.startsWith("[Context note:")).length, 1);
});
