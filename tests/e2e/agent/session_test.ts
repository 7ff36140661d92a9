import assert from "node:assert/strict";
import { interactiveOnStdin, runDeft, trustedHome } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, httpError, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { lakeviewConfig, mockModelArgs as modelArgs } from "../../helpers/mock_session.ts";

async function home(): Promise<string> {
  return await trustedHome();
}

Deno.test("interactive (piped): one conversation across prompts, shared bash state", async () => {
  const repo = await makeBuggyRepo();
  const h = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "export DEFT_MARK=remembered; cd /tmp" }]]),
    chatToolCalls([["task_done", {}]]),
    chatToolCalls([["bash", { command: 'echo "$DEFT_MARK in $(pwd)"' }]]),
    chatText("It said: remembered in /tmp."),
  ]);
  try {
    const r = await interactiveOnStdin(
      repo,
      mock,
      "/help\nfirst task\n/status\n\nsecond task\nexit\n",
      { args: ["--approval", "never"], cwd: h, env: { HOME: h } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /conversation carries over/);
    assert.match(r.stderr, /conversation: 6 message\(s\), 1 turn\(s\)/);
    const firstOfSecond = mock.requests[2].body.messages;
    assert.equal(firstOfSecond.length, 7, "the second prompt goes on with the first turn");
    assert.equal(firstOfSecond.at(-1).content, "second task");
    const answer = mock.requests[3].body.messages.at(-1).content;
    assert.match(answer, /remembered in \/tmp/);
    assert.match(r.stdout, /It said: remembered in \/tmp\./, "a text answer ends the turn, shown");
    assert.equal(mock.requests.length, 4);
    assert.match(r.stderr, /bye/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive without a terminal: the default approval mode fails at start", async () => {
  const h = await home();
  const mock = MockLLM.start([]);
  try {
    const r = await runDeft(["interactive", ...modelArgs(mock)], {
      cwd: h,
      env: { HOME: h },
      stdin: "do something\n",
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /approval mode 'commands'.*not a terminal.*--approval never/s);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});

Deno.test("lakeview labels steps beside the loop and never fails the run", async () => {
  const repo = await makeBuggyRepo();
  const h = await home();
  const main = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", { command: "view", path: `${repo}/calc.py` }]]),
    chatToolCalls([["sequentialthinking", {
      thought: "fix it",
      thought_number: 1,
      total_thoughts: 1,
      next_thought_needed: false,
    }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  const lake = MockLLM.start([
    chatText("EXAMINE_CODE: reads calc.py to find the bug"),
    httpError(400),
    chatText("REPORT: declares the task finished"),
  ]);
  const config = lakeviewConfig(main.url, lake.url, 5);
  try {
    await Deno.writeTextFile(`${h}/deft.yaml`, config);
    const traj = `${h}/t.json`;
    const r = await runDeft(["run", "fix", "-w", repo, "-t", traj], { cwd: h, env: { HOME: h } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /\[1\] EXAMINE_CODE: reads calc\.py/);
    assert.match(r.stderr, /\[2\] \(no step summary/);
    const t = JSON.parse(await Deno.readTextFile(traj));
    assert.deepEqual(t.agent_steps[0].lakeview, {
      tag: "EXAMINE_CODE",
      summary: "reads calc.py to find the bug",
    });
    assert.equal(t.agent_steps[1].lakeview, null);
    assert.equal(t.agent_steps[2].lakeview.tag, "REPORT");
    assert.equal(lake.requests[0].body.tools, undefined, "the labeler gets no tools");
  } finally {
    await main.close();
    await lake.close();
  }
});

Deno.test("a 200-step run never exceeds a small context window", async () => {
  const repo = await makeBuggyRepo();
  const h = await home();
  const WINDOW = 6000;
  const tokensOf = (body: unknown) => Math.ceil(JSON.stringify(body).length / 4);
  let step = 0;
  const mock = MockLLM.start([], (req) => {
    step++;
    const reply = step >= 200 ? chatToolCalls([["task_done", {}]]) : chatToolCalls([[
      "bash",
      { command: `printf 'line %s\\n' $(seq 1 400) # step ${step}` },
    ]]);
    (reply.body as { usage: { prompt_tokens: number } }).usage.prompt_tokens = tokensOf(req.body);
    return reply;
  });
  const config = `
model_providers:
  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }
models:
  m: { model_provider: m, model: mock, max_retries: 0, context_window: ${WINDOW}, max_tokens: 500 }
agents:
  deft_agent: { model: m, max_steps: 210, tools: [bash, task_done] }
`;
  try {
    await Deno.writeTextFile(`${h}/deft.yaml`, config);
    const traj = `${h}/t.json`;
    const r = await runDeft(["run", "loop", "-w", repo, "-t", traj], { cwd: h, env: { HOME: h } });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.equal(mock.requests.length, 200);
    const sizes = mock.requests.map((q) => tokensOf(q.body));
    const worst = Math.max(...sizes);
    assert.ok(worst <= WINDOW, `a request of ~${worst} tokens exceeded the ${WINDOW}-token window`);
    // Without management the last request would have been far larger than the window.
    const t = JSON.parse(await Deno.readTextFile(traj));
    assert.ok(t.context_events.length > 100, "the trajectory records what was shortened");
    assert.ok(
      t.context_events.every((e: { before_chars: number; after_chars: number }) =>
        e.after_chars < e.before_chars
      ),
    );
  } finally {
    await mock.close();
  }
});
