/**
 * Every model request Deft makes counts against the budget caps, not only the loop's: the step
 * summaries of the lakeview model and `/compact`'s summary are checked against the caps before
 * they are sent, and what they used is spent. A mock tool-call reply uses 120 tokens, a mock
 * text reply 60.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { interactiveOnStdin, runDeft, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { taskConfigYaml } from "../../helpers/subagent.ts";
import { lakeviewConfig } from "../../helpers/mock_session.ts";

/** Replies that would go on for `n` steps, each a harmless bash call, then task_done. */
function steps(n: number): MockReply[] {
  const replies = [];
  for (let i = 0; i < n; i++) {
    replies.push(chatToolCalls([["bash", { command: `echo step ${i}` }]]));
  }
  replies.push(chatToolCalls([["task_done", {}]]));
  return replies;
}

/** A step summary that used 1000 input and 100 output tokens. */
function costlySummary(): MockReply {
  const reply = chatText("EXAMINE_CODE: runs a command");
  const body = reply.body as { usage: Record<string, unknown> };
  body.usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
  return reply;
}

Deno.test("budget: the step summaries' tokens count; a cap they reach stops the next request, exit 3", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome("deft-budget-");
  const main = MockLLM.start(steps(5));
  const lake = MockLLM.start([], () => costlySummary());
  const config = lakeviewConfig(main.url, lake.url, 10);
  try {
    await Deno.writeTextFile(join(home, "deft.yaml"), config);
    const trajectory = join(home, "t.json");
    // The loop alone would spend 6 × 120 = 720 tokens; one summary's 1100 reach the cap.
    const r = await runDeft(
      ["run", "fix add", "-w", repo, "--json", "-t", trajectory, "--max-tokens", "1000"],
      { cwd: home, env: { HOME: home }, stdin: "" },
    );
    assert.equal(r.code, 3, r.stderr);
    assert.equal(main.requests.length, 1, "the second request of the loop was never sent");
    assert.equal(lake.requests.length, 1);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.budget.stopped.cap, "max_tokens");
    assert.equal(summary.budget.spent.tokens, 120 + 1100);
    assert.match(summary.final_result, /Stopped at the budget cap: 1220 tokens used, cap 1000/);
    const saved = JSON.parse(await Deno.readTextFile(trajectory));
    assert.equal(saved.budget.spent.tokens, 1220, "the trajectory counts the summary");
  } finally {
    await main.close();
    await lake.close();
  }
});

function interactive(mock: MockLLM, home: string, repo: string, cap: string, stdin: string) {
  return interactiveOnStdin(repo, mock, stdin, {
    args: ["--approval", "never", "--max-tokens", cap],
    model: "mock-model",
    cwd: home,
    env: { HOME: home, XDG_STATE_HOME: join(home, "state") },
  });
}

Deno.test("budget: /compact's tokens count; the prompt after a /compact that reached the cap is not sent, exit 3", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome("deft-budget-");
  const mock = MockLLM.start([
    chatText("Answer one."),
    chatText("SUMMARY: one question was answered."),
    chatText("Answer two."),
  ]);
  try {
    // 60 tokens for the first turn, 60 for the summary: 120 reach a cap of 100.
    const r = await interactive(mock, home, repo, "100", "first\n/compact\nsecond\n");
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /compacted the conversation/);
    assert.match(r.stderr, /Stopped at the budget cap: 120 tokens used, cap 100 tokens/);
    assert.equal(mock.requests.length, 2, "the second prompt was never sent");
  } finally {
    await mock.close();
  }
});

Deno.test("budget: a /compact refused at the cap says so and keeps the conversation", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome("deft-budget-");
  const mock = MockLLM.start([chatText("Answer one."), chatText("SUMMARY: never asked for.")]);
  try {
    // The first turn's 60 tokens reach a cap of 50; its answer ends the turn, not the session.
    const r = await interactive(mock, home, repo, "50", "first\n/compact\n/status\nexit\n");
    assert.equal(mock.requests.length, 1, "/compact sent no request");
    assert.match(
      r.stderr,
      /not compacted: the budget cap is reached: 60 tokens used, cap 50 tokens \(--max-tokens\) \(the conversation is unchanged\)/,
    );
    assert.doesNotMatch(r.stderr, /compacted the conversation/);
    assert.match(r.stderr, /conversation: 3 message\(s\)/, "the conversation is as it was");
  } finally {
    await mock.close();
  }
});

Deno.test("budget: a child agent draws from its parent's budget; the cap stops both, exit 3", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome("deft-budget-");
  let parentAsked = 0;
  const childAsks: number[] = [];
  const mock = MockLLM.start([], (request) => {
    const messages: { role: string; content: string }[] = request.body.messages;
    const task = messages.find((m) => m.role === "user")?.content ?? "";
    if (task.includes("CHILD-WORK")) {
      childAsks.push(mock.requests.length);
      return chatToolCalls([["bash", { command: "echo child" }]]);
    }
    return ++parentAsked === 1
      ? chatToolCalls([["Task", { description: "look", prompt: "CHILD-WORK", mode: "read" }]])
      : chatToolCalls([["bash", { command: "echo parent" }]]);
  });
  const config = join(home, ".config/deft/config.yaml");
  await Deno.writeTextFile(
    config,
    (await Deno.readTextFile(config)) + taskConfigYaml(mock.url),
  );
  try {
    // 120 tokens a request: the parent's first and the child's first two reach 360 > 300.
    const r = await runDeft([
      "run",
      "PARENT",
      "-w",
      repo,
      "--json",
      "--max-tokens",
      "300",
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: join(home, "state") }, stdin: "" });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(childAsks.length, 2, "the child's third request was never sent");
    assert.equal(parentAsked, 1, "the parent asked nothing after its child");
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.budget.spent.tokens, 360);
    assert.equal(summary.budget.stopped.cap, "max_tokens");
  } finally {
    await mock.close();
  }
});

Deno.test("budget: a cost cap with a step-summary model whose price is unknown is refused at start", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHome("deft-budget-");
  const main = MockLLM.start(steps(1));
  await Deno.writeTextFile(
    join(home, "deft.yaml"),
    `
model_providers:
  main: { provider: openai_compatible, base_url: "${main.url}/v1", api_key: k }
models:
  main: { model_provider: main, model: mock, max_retries: 0 }
  lake: { model_provider: main, model: labeler, max_retries: 0 }
agents:
  deft_agent: { model: main, max_steps: 10, enable_lakeview: true }
lakeview: { model: lake }
prices:
  mock: { input: 1.0, output: 2.0 }
`,
  );
  try {
    const r = await runDeft(["run", "fix add", "-w", repo, "--max-cost-usd", "1"], {
      cwd: home,
      env: { HOME: home },
      stdin: "",
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /price of model 'labeler' is unknown/);
    assert.equal(main.requests.length, 0);
  } finally {
    await main.close();
  }
});
