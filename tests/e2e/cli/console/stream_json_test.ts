import assert from "node:assert/strict";
import { runDeft, runMocked, trustedHome } from "../../../helpers/deft.ts";
import {
  anthropicStream,
  anthropicToolUses,
  chatStream,
  chatToolCalls,
  geminiFunctionCalls,
  geminiStream,
  MockLLM,
  type MockReply,
  ollamaStream,
  ollamaToolCalls,
} from "../../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../../helpers/temp.ts";

function fixReplies(repo: string, stream = true) {
  const as = stream ? chatStream : (reply: MockReply) => reply;
  return [
    as(chatToolCalls(
      [["str_replace_based_edit_tool", {
        command: "str_replace",
        path: `${repo}/calc.py`,
        old_str: "return a - b",
        new_str: "return a + b",
      }]],
      "The sign is wrong; fixing it.",
    )),
    as(chatToolCalls([["task_done", {}]], "Done: add() adds.")),
  ];
}

async function deft(mock: MockLLM, repo: string, provider: string, extra: string[]) {
  const home = await tempDirUntilExit("deft-home-");
  const base = provider === "anthropic" ? mock.url : `${mock.url}/v1`;
  return await runMocked(mock, "fix add", repo, {
    provider,
    baseUrl: base,
    extra: ["-t", `${home}/t.json`, ...extra],
    cwd: home,
    env: { HOME: home },
  }).then((r) => ({ ...r, trajectory: `${home}/t.json` }));
}

Deno.test("stream-json: one JSON event per line, in order, in the trajectory's shapes", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start(fixReplies(repo));
  try {
    const r = await deft(mock, repo, "openai_compatible", ["--output-format", "stream-json"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    const events = lines.map((line) => JSON.parse(line));
    for (const e of events) assert.equal(typeof e.type, "string", JSON.stringify(e));
    const types = events.map((e) => e.type);
    assert.equal(types[0], "run_started");
    assert.equal(types[types.length - 1], "run_done");
    // Compress runs of text events to see the order of the rest.
    const shape = types.filter((t, i) => t !== "text" || types[i - 1] !== "text");
    assert.deepEqual(shape, [
      "run_started",
      "text",
      "tool_call",
      "tool_result",
      "step",
      "text",
      "tool_call",
      "tool_result",
      "step",
      "run_done",
    ]);
    // The text came in pieces, and the pieces make the whole answer the trajectory records.
    const step1 = events.filter((e) => e.type === "text" && e.step === 1);
    assert.ok(step1.length > 1, `${step1.length} text event(s)`);
    assert.equal(step1.map((e) => e.delta).join(""), "The sign is wrong; fixing it.");
    const recorded = JSON.parse(await Deno.readTextFile(r.trajectory));
    assert.equal(recorded.llm_interactions[0].response.content, "The sign is wrong; fixing it.");
    assert.deepEqual(recorded.llm_interactions[0].response.tool_calls[0].arguments, {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    });
    const call = events.find((e) => e.type === "tool_call");
    assert.equal(call.name, "str_replace_based_edit_tool");
    assert.equal(call.call_id, recorded.agent_steps[0].tool_calls[0].call_id);
    const result = events.find((e) => e.type === "tool_result");
    assert.deepEqual(
      Object.keys(result).sort(),
      ["approval", "call_id", "error", "name", "result", "step", "success", "type"],
    );
    assert.deepEqual({ ...result, type: undefined, step: undefined }, {
      ...recorded.agent_steps[0].tool_results[0],
      type: undefined,
      step: undefined,
    });
    const done = events[events.length - 1];
    assert.equal(done.success, true);
    assert.deepEqual(done.files_changed, [{ path: "calc.py", added: 1, removed: 1 }]);
    assert.equal(done.trajectory, r.trajectory);
    // The run really streamed: the SDK asked for a stream.
    assert.equal(mock.requests[0].body.stream, true);
  } finally {
    await mock.close();
  }
});

Deno.test("stream-json through the Anthropic SDK's stream", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    anthropicStream(anthropicToolUses([["bash", { command: "echo hi" }]], "Let me look around.")),
    anthropicStream(anthropicToolUses([["task_done", {}]], "All done.")),
  ]);
  try {
    const r = await deft(mock, repo, "anthropic", ["--output-format", "stream-json"]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    const text = events.filter((e) => e.type === "text" && e.step === 1).map((e) => e.delta);
    assert.ok(text.length > 1);
    assert.equal(text.join(""), "Let me look around.");
    const result = events.find((e) => e.type === "tool_result");
    assert.equal(result.result.trim(), "hi");
    const done = events[events.length - 1];
    assert.equal(done.type, "run_done");
    assert.equal(done.usage.input_tokens, 400);
    assert.ok(done.cost_usd === null, "mock-model has no price");
  } finally {
    await mock.close();
  }
});

Deno.test("json and stream-json print a JSON error on stdout for configuration mistakes", async () => {
  const repo = await makeBuggyRepo();
  for (const format of ["json", "stream-json"]) {
    await using homeTemp = await tempDir("deft-home-");
    const home = homeTemp.path;
    const r = await runDeft(
      ["run", "x", "-w", repo, "-p", "openai_compatible", "-m", "m", "--output-format", format],
      { cwd: home, env: { HOME: home } },
    );
    assert.equal(r.code, 2, r.stderr);
    const error = JSON.parse(r.stdout);
    assert.equal(error.exit_code, 2);
    assert.match(error.error, /needs the server's base URL/);
    if (format === "stream-json") assert.equal(error.type, "error");
    assert.match(r.stderr, /needs the server's base URL/);
  }
});

Deno.test("--json is --output-format json; the summary has cost and files changed", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start(fixReplies(repo, false));
  try {
    const home = await trustedHome();
    await Deno.writeTextFile(
      `${home}/deft.yaml`,
      "prices:\n  mock-model: { input: 1.0, output: 2.0 }\n",
    );
    const r = await runMocked(mock, "fix add", repo, {
      apiKey: null,
      extra: ["--json"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.deepEqual(summary.files_changed, [{ path: "calc.py", added: 1, removed: 1 }]);
    // Two calls of 100 input (10 cached) and 20 output tokens at $1/$2 per million.
    assert.ok(Math.abs(summary.cost_usd - (200 * 1 + 40 * 2) / 1e6) < 1e-9, summary.cost_usd);
  } finally {
    await mock.close();
  }
});

for (
  const [provider, stream] of [
    ["google", () => [
      geminiStream(geminiFunctionCalls([["bash", { command: "echo hi" }]], "Looking first.")),
      geminiStream(geminiFunctionCalls([["task_done", {}]], "All done.")),
    ]],
    ["ollama", () => [
      ollamaStream(ollamaToolCalls([["bash", { command: "echo hi" }]], "Looking first.")),
      ollamaStream(ollamaToolCalls([["task_done", {}]], "All done.")),
    ]],
  ] as const
) {
  Deno.test(`stream-json through the ${provider} SDK's stream`, async () => {
    const repo = await makeBuggyRepo();
    const mock = MockLLM.start(stream());
    try {
      const r = await deft(mock, repo, provider, ["--output-format", "stream-json"]);
      assert.equal(r.code, 0, r.stderr);
      const events = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
      const text = events.filter((e) => e.type === "text" && e.step === 1).map((e) => e.delta);
      assert.ok(text.length > 1, JSON.stringify(text));
      assert.equal(text.join(""), "Looking first.");
      assert.equal(events.find((e) => e.type === "tool_result").result.trim(), "hi");
      assert.equal(events[events.length - 1].type, "run_done");
      assert.ok(mock.requests[0].path.includes(provider === "google" ? "stream" : "/api/chat"));
      if (provider === "ollama") assert.equal(mock.requests[0].body.stream, true);
    } finally {
      await mock.close();
    }
  });
}

Deno.test("a bad flag with --json or stream-json: a JSON error on stdout, exit 2", async () => {
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const bad = await runDeft(["run", "x", "--json", "--max-steps", "0"], { cwd: home });
  assert.equal(bad.code, 2);
  assert.match(JSON.parse(bad.stdout).error, /--max-steps/);
  const unknown = await runDeft(["run", "x", "--output-format", "stream-json", "--bogus"], {
    cwd: home,
  });
  assert.equal(unknown.code, 2);
  assert.deepEqual(JSON.parse(unknown.stdout), {
    type: "error",
    success: false,
    exit_code: 2,
    error: "unknown option '--bogus'",
  });
  const text = await runDeft(["run", "x", "--bogus"], { cwd: home });
  assert.equal(text.code, 2);
  assert.equal(text.stdout, "");
  // The peers' spellings of a headless run answer the same way.
  for (
    const args of [["exec", "x", "--json", "--bogus"], [
      "-p",
      "x",
      "--output-format",
      "json",
      "--bogus",
    ]]
  ) {
    const r = await runDeft(args, { cwd: home });
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(JSON.parse(r.stdout).error, "unknown option '--bogus'", args.join(" "));
  }
});
