/** The agent loop itself (`runAgent`), against a scripted in-process model and fake tools. */
import assert from "node:assert/strict";
import { type AgentOptions, runAgent } from "../../src/agent/agent.ts";
import { HISTORY_RESULT_CHARS } from "../../src/llm/tool_message.ts";
import type { AgentConsole } from "../../src/agent/console.ts";
import { NO_TOOL_CALL_NUDGE } from "../../src/agent/prompt.ts";
import type { LLMMessage } from "../../src/llm/types.ts";
import { fail, ok, type Tool } from "../../src/tools/base.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { TaskDoneTool } from "../../src/tools/task_done.ts";
import { TrajectoryRecorder } from "../../src/trajectory/recorder.ts";
import { answerText, callTools, type FakeAnswer, FakeLLM } from "../helpers/fake_llm.ts";
import { tempDir } from "../helpers/temp.ts";
import { FakeTool, testContext } from "../helpers/tools.ts";

/** A console that keeps what the loop reports instead of printing it. */
class QuietConsole implements AgentConsole {
  readonly steps: number[] = [];
  readonly notes: string[] = [];
  step(step: number): void {
    this.steps.push(step);
  }
  note(message: string): void {
    this.notes.push(message);
  }
  summary(): void {}
}

/** Runs the loop on `script` with `tools` plus the real task_done. */
async function loop(
  script: FakeAnswer[],
  tools: Tool[] = [],
  options: Partial<AgentOptions> = {},
) {
  await using dir = await tempDir("deft-loop-");
  const client = new FakeLLM(script);
  const maxSteps = options.maxSteps ?? 5;
  const recorder = new TrajectoryRecorder(`${dir.path}/trajectory.json`, {
    task: "fix it",
    provider: client.provider,
    model: client.model,
    max_steps: maxSteps,
  });
  const console = new QuietConsole();
  const executor = new ToolExecutor([...tools, new TaskDoneTool(testContext(dir.path))]);
  const result = await runAgent("fix it", {
    client,
    executor,
    recorder,
    console,
    workspace: dir.path,
    maxSteps,
    parallelToolCalls: false,
    ...options,
  });
  return { result, client, recorder, console };
}

/** The messages the model saw at call `i` after the ones it saw at call `i - 1`. */
function newMessages(client: FakeLLM, i: number): LLMMessage[] {
  return client.calls[i].messages.slice(client.calls[i - 1].messages.length);
}

Deno.test("loop: task_done ends the run at once, with the model's text as the result", async () => {
  const { result, client, recorder } = await loop([
    callTools([["task_done", {}]], "Fixed add()."),
    answerText("never asked"),
  ]);
  assert.deepEqual(result, {
    success: true,
    interrupted: false,
    finalResult: "Fixed add().",
    steps: 1,
  });
  assert.equal(client.calls.length, 1);
  assert.deepEqual(client.calls[0].tools, ["task_done"]);
  assert.deepEqual(client.calls[0].messages.map((m) => m.role), ["system", "user"]);
  assert.equal(recorder.data.success, true);
  assert.equal(recorder.data.final_result, "Fixed add().");
  assert.equal(recorder.data.agent_steps.length, 1);
});

Deno.test("loop: task_done without text ends with 'Task done.'", async () => {
  const { result } = await loop([callTools([["task_done", {}]])]);
  assert.equal(result.success, true);
  assert.equal(result.finalResult, "Task done.");
});

Deno.test("loop: a tool's error goes back to the model as an error result and the run goes on", async () => {
  const explode = new FakeTool("explode", [], () => {
    throw new Error("boom");
  });
  const refuse = new FakeTool("refuse", [], () => fail("not today"));
  const { result, client } = await loop([
    callTools([["explode", {}], ["refuse", {}]]),
    callTools([["task_done", {}]]),
  ], [explode, refuse]);
  assert.equal(result.success, true);
  assert.equal(result.steps, 2);
  const [assistant, thrown, refused] = newMessages(client, 1);
  assert.equal(assistant.role, "assistant");
  assert.deepEqual(
    { ...thrown, call_id: undefined },
    {
      role: "tool",
      call_id: undefined,
      name: "explode",
      content: "Error: Error executing tool 'explode': boom",
      is_error: true,
    },
  );
  assert.equal(refused.role === "tool" && refused.content, "Error: not today");
  assert.equal(refused.role === "tool" && refused.is_error, true);
});

Deno.test("loop: an unknown tool name gets the list of tools, and the run goes on", async () => {
  const bash = new FakeTool("bash", [], () => fail("unused"));
  const { result, client } = await loop([
    callTools([["no_such_tool", { x: 1 }]]),
    callTools([["task_done", {}]], "done"),
  ], [bash]);
  assert.equal(result.success, true);
  const reply = newMessages(client, 1)[1];
  assert.equal(reply.role, "tool");
  assert.equal(
    reply.role === "tool" && reply.content,
    "Error: Tool 'no_such_tool' not found. Available tools: [bash, task_done]",
  );
  assert.equal(reply.role === "tool" && reply.is_error, true);
});

Deno.test("loop: the step limit ends a run that never calls task_done", async () => {
  const echo = new FakeTool("echo", []);
  const script = Array.from({ length: 5 }, () => callTools([["echo", {}]]));
  const { result, client, recorder, console } = await loop(script, [echo], { maxSteps: 3 });
  assert.deepEqual(result, {
    success: false,
    interrupted: false,
    finalResult: "Task execution exceeded maximum steps without completion.",
    steps: 3,
  });
  assert.equal(client.calls.length, 3);
  assert.deepEqual(console.steps, [1, 2, 3]);
  assert.equal(recorder.data.success, false);
});

Deno.test("loop: a text-only answer is nudged to call a tool; with textEndsTurn it ends the turn", async () => {
  const nudged = await loop([answerText("thinking"), callTools([["task_done", {}]])]);
  assert.equal(nudged.result.success, true);
  assert.equal(nudged.result.steps, 2);
  assert.deepEqual(newMessages(nudged.client, 1), [
    { role: "assistant", content: "thinking", tool_calls: [] },
    { role: "user", content: NO_TOOL_CALL_NUDGE },
  ]);

  const answered = await loop([answerText("Here is the answer.")], [], { textEndsTurn: true });
  assert.deepEqual(answered.result, {
    success: true,
    interrupted: false,
    finalResult: "Here is the answer.",
    steps: 1,
  });
});

Deno.test("loop: a failed model call ends the run and says why", async () => {
  const { result, recorder } = await loop([new Error("connection reset")]);
  assert.deepEqual(result, {
    success: false,
    interrupted: false,
    finalResult: "The model call failed: connection reset",
    steps: 1,
  });
  assert.equal(recorder.data.agent_steps[0].state, "error");
});

Deno.test("loop: arguments that are not JSON are answered without running the tool", async () => {
  let ran = 0;
  const echo = new FakeTool("echo", [], () => {
    ran++;
    return fail("should not run");
  });
  const broken = callTools([["echo", "{not json"]]);
  broken.tool_calls[0].argumentsError = "Unexpected token n";
  const { result, client } = await loop([broken, callTools([["task_done", {}]])], [echo]);
  assert.equal(result.success, true);
  assert.equal(ran, 0);
  const reply = newMessages(client, 1)[1];
  assert.equal(
    reply.role === "tool" && reply.content,
    "Error: The arguments for tool 'echo' are not valid JSON (Unexpected token n). " +
      "Send them as one JSON object.",
  );
});

Deno.test("loop: an aborted signal interrupts before the next model call", async () => {
  const controller = new AbortController();
  const echo = new FakeTool("echo", [], () => {
    controller.abort();
    return fail("stopped");
  });
  const { result, client } = await loop(
    [callTools([["echo", {}]]), callTools([["task_done", {}]])],
    [echo],
    { signal: controller.signal },
  );
  assert.deepEqual(result, {
    success: false,
    interrupted: true,
    finalResult: "Interrupted by the user.",
    steps: 1,
  });
  assert.equal(client.calls.length, 1);
});

Deno.test("loop: a huge tool result is kept in the conversation bounded, its start and end whole and what was dropped said; the trajectory keeps it all", async () => {
  const huge = "START" + "x".repeat(3_000_000) + "END";
  const flood = new FakeTool("flood", [], () => ok(huge));
  const { client, recorder } = await loop([
    callTools([["flood", {}]]),
    callTools([["task_done", {}]], "done"),
  ], [flood]);
  const [seen] = newMessages(client, 1).filter((m) => m.role === "tool");
  const text = seen.content as string;
  assert.ok(text.length < HISTORY_RESULT_CHARS + 300, `kept ${text.length} characters`);
  assert.ok(text.startsWith("START") && text.endsWith("END"));
  assert.match(text, /\[… 2900008 characters of this result were dropped here/);
  assert.equal(recorder.data.agent_steps[0].tool_results?.[0].result, huge);
});
