/**
 * Hard budget caps (`--max-cost-usd`, `--max-tokens`, `--max-wall-time`, the config's `budget`)
 * with the streaming mock model: a cap reached stops the run before the next model request (or
 * between two tool calls of one step) with exit code 3, and `--json` and the trajectory say what
 * was spent against which cap. Each mock reply costs 100 input + 20 output tokens; at the mock
 * prices below ($1 and $2 per million) that is $0.00014.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { interactiveOnStdin, runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

const PRICES = "prices:\n  mock-model: { input: 1.0, output: 2.0 }\n";

/** Replies that would go on for `n` steps, each a harmless bash call, then task_done. */
function steps(n: number) {
  const replies = [];
  for (let i = 0; i < n; i++) {
    replies.push(chatToolCalls([["bash", { command: `echo step ${i}` }]]));
  }
  replies.push(chatToolCalls([["task_done", {}]]));
  return replies;
}

async function run(mock: MockLLM, flags: string[], config = PRICES, userConfig?: string) {
  const repo = await makeBuggyRepo();
  const home = await trustedHome();
  await Deno.writeTextFile(join(home, "deft.yaml"), config);
  if (userConfig !== undefined) {
    await Deno.writeTextFile(join(home, ".config/deft/config.yaml"), userConfig);
  }
  const trajectory = join(home, "t.json");
  const r = await runMocked(mock, "fix add", repo, {
    extra: ["--json", "-t", trajectory, ...flags],
    cwd: home,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
  });
  return { ...r, repo, trajectory };
}

Deno.test("budget: --max-cost-usd below one step's cost stops before the next request, exit 3", async () => {
  const mock = MockLLM.start(steps(3));
  try {
    const r = await run(mock, ["--max-cost-usd", "0.0001"]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(mock.requests.length, 1, "the mock saw exactly one request");
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.exit_code, 3);
    assert.equal(summary.budget.stopped.cap, "max_cost_usd");
    assert.equal(summary.budget.stopped.limit, 0.0001);
    assert.ok(Math.abs(summary.budget.spent.cost_usd - 0.00014) < 1e-9, r.stdout);
    assert.match(summary.final_result, /budget cap: \$0\.0001 spent, cap \$0\.0001/);
    assert.match(r.stderr, /budget cap/);
    const saved = JSON.parse(await Deno.readTextFile(r.trajectory));
    assert.equal(saved.budget.stopped.cap, "max_cost_usd");
    assert.equal(saved.budget.caps.max_cost_usd, 0.0001);
  } finally {
    await mock.close();
  }
});

Deno.test("budget: --max-tokens counts every response's tokens and stops at the cap", async () => {
  const mock = MockLLM.start(steps(5));
  try {
    // 120 tokens a response: 240 after two reach a cap of 200.
    const r = await run(mock, ["--max-tokens", "200"]);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(mock.requests.length, 2, "stopped before the third request");
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.budget.stopped.cap, "max_tokens");
    assert.equal(summary.budget.spent.tokens, 240);
  } finally {
    await mock.close();
  }
});

Deno.test("budget: --max-wall-time stops between two tool calls of one step, not after it", async () => {
  const marker = "after-the-cap";
  const mock = MockLLM.start([
    chatToolCalls([
      ["bash", { command: "sleep 3" }],
      ["bash", { command: `touch ${marker}` }],
    ]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await run(mock, ["--max-wall-time", "2"]);
    assert.equal(r.code, 3, r.stderr);
    const made = await Deno.stat(join(r.repo, marker)).then(() => true, () => false);
    assert.equal(made, false, "the call after the cap was reached did not run");
    assert.equal(mock.requests.length, 1);
    const saved = JSON.parse(await Deno.readTextFile(r.trajectory));
    const results = saved.agent_steps[0].tool_results;
    assert.match(results[1].error, /Not run: Stopped at the budget cap: .* s worked, cap 2 s/);
    assert.equal(saved.budget.stopped.cap, "max_wall_time");
  } finally {
    await mock.close();
  }
});

Deno.test("budget: a cost cap on a model without a price is refused before any request", async () => {
  const mock = MockLLM.start(steps(1));
  try {
    const r = await run(mock, ["--max-cost-usd", "1"], "{}\n");
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stdout + r.stderr, /price of model 'mock-model' is unknown/);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});

for (const trusted of [true, false]) {
  Deno.test(`budget: a ${trusted ? "trusted" : "untrusted"} repository config cannot raise the user's cap`, async () => {
    const mock = MockLLM.start(steps(5));
    try {
      const home = await tempDirUntilExit("deft-budget-");
      const user =
        `${trusted ? `trusted_folders: [${JSON.stringify(await Deno.realPath(home))}]\n` : ""}` +
        `${PRICES}budget: { max_tokens: 100 }\n`;
      const r = await runIn(mock, home, "budget: { max_tokens: 1000000 }\n", user);
      assert.equal(r.code, 3, r.stderr);
      assert.equal(mock.requests.length, 1, "the user's cap of 100 tokens stood");
      assert.equal(JSON.parse(r.stdout).budget.caps.max_tokens, 100);
    } finally {
      await mock.close();
    }
  });
}

Deno.test("budget: a repository config may lower the user's cap", async () => {
  const mock = MockLLM.start(steps(5));
  try {
    const home = await tempDirUntilExit("deft-budget-");
    const r = await runIn(
      mock,
      home,
      "budget: { max_tokens: 100 }\n",
      `${PRICES}budget: { max_tokens: 100000 }\n`,
    );
    assert.equal(r.code, 3, r.stderr);
    assert.equal(mock.requests.length, 1);
  } finally {
    await mock.close();
  }
});

async function runIn(mock: MockLLM, home: string, repoConfig: string, userConfig: string) {
  const repo = await makeBuggyRepo();
  await Deno.mkdir(join(home, ".config/deft"), { recursive: true });
  await Deno.writeTextFile(join(home, ".config/deft/config.yaml"), userConfig);
  await Deno.writeTextFile(join(home, "deft.yaml"), repoConfig);
  return await runMocked(mock, "fix add", repo, {
    extra: ["--json", "-t", join(home, "t.json")],
    cwd: home,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
    stdin: "",
  });
}

Deno.test("budget: an interactive session ends after the turn that reached a cap, exit 3", async () => {
  const mock = MockLLM.start(steps(5));
  try {
    const repo = await makeBuggyRepo();
    const home = await tempDirUntilExit("deft-budget-");
    const r = await interactiveOnStdin(repo, mock, "first prompt\nsecond prompt\n", {
      args: ["--approval", "never", "--max-tokens", "100"],
      model: "mock-model",
      cwd: home,
      env: { HOME: home, XDG_STATE_HOME: join(home, "state") },
    });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /Stopped at the budget cap: 120 tokens used, cap 100 tokens/);
    assert.equal(mock.requests.length, 1, "the second prompt was never sent");
  } finally {
    await mock.close();
  }
});
