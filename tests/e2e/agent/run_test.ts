import assert from "node:assert/strict";
import { denoDir, mockRunArgs, runDeft, runMocked, trustedHome } from "../../helpers/deft.ts";
import {
  anthropicToolUses,
  chatText,
  chatToolCalls,
  httpError,
  MockLLM,
} from "../../helpers/mock_llm.ts";
import { makeBuggyRepo, resetRepo } from "../../helpers/repo.ts";

const KEY = "sk-test-SECRET-0123456789";

async function sandboxHome(): Promise<string> {
  return await trustedHome();
}

/** `deft run` against the mock, as openai_compatible unless `provider` says otherwise. */
async function run(
  mock: MockLLM,
  repo: string,
  extra: string[],
  provider = "openai_compatible",
) {
  const home = await sandboxHome();
  const base = provider === "anthropic" ? mock.url : `${mock.url}/v1`;
  const result = await runMocked(mock, "fix add() so that check.py passes", repo, {
    provider,
    baseUrl: base,
    apiKey: KEY,
    extra: ["--json", ...extra],
    cwd: home,
    env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
  });
  return { ...result, home };
}

function fixScript(repo: string) {
  return [
    chatToolCalls([["str_replace_based_edit_tool", { command: "view", path: `${repo}/calc.py` }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["bash", { command: `cd ${repo} && python3 check.py` }]]),
    chatToolCalls([["task_done", {}]], "Fixed add(): it subtracted instead of adding."),
  ];
}

/** Every assistant tool call in a Chat request is answered by a tool message. */
function assertEveryCallAnswered(
  messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string }[],
) {
  const asked = messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
  const answered = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
  assert.deepEqual(answered, asked);
}

Deno.test("end to end: view, edit, check, task_done; --must-patch --patch-path exits 0", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start(fixScript(repo));
  try {
    const patchPath = `${await sandboxHome()}/fix.patch`;
    const traj = `${await sandboxHome()}/t.json`;
    const r = await run(mock, repo, ["--must-patch", "--patch-path", patchPath, "-t", traj]);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.success, true);
    assert.equal(summary.steps, 4);
    const patch = await Deno.readTextFile(patchPath);
    assert.ok(patch.includes("-    return a - b\n+    return a + b"), patch);
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), "def add(a, b):\n    return a + b\n");
    // The check ran for real and its output went back to the model.
    const last = mock.requests[3].body.messages;
    assert.match(JSON.stringify(last), /check passed/);
    assertEveryCallAnswered(last);
    // The trajectory is complete and carries no API key.
    const text = await Deno.readTextFile(traj);
    assert.ok(!text.includes(KEY), "API key leaked into the trajectory");
    const t = JSON.parse(text);
    assert.equal(t.success, true);
    assert.equal(t.agent_steps.length, 4);
    assert.equal(t.llm_interactions.length, 4);
    assert.equal(t.total_usage.input_tokens, 400);
    assert.equal(t.total_usage.cache_read_input_tokens, 40);
    assert.equal(t.total_usage.reasoning_tokens, 20);
    for (
      const key of [
        "task",
        "start_time",
        "end_time",
        "provider",
        "model",
        "max_steps",
        "final_result",
        "execution_time",
      ]
    ) {
      assert.ok(key in t, `trajectory lacks ${key}`);
    }
  } finally {
    await mock.close();
  }
});

Deno.test("the API key is masked wherever it reaches the trajectory: tool input, output, model text", async () => {
  const repo = await makeBuggyRepo();
  // A key with no well-known token shape (a self-hosted gateway's), so only the recorder's list of
  // the run's keys can mask it, not the token-shape patterns.
  const key = "gateway-7f3a9c1e5b2d8064";
  // The model echoes the key through bash and repeats it in its own words, so the key reaches the
  // recorder three ways: the call's arguments, the tool's output and the assistant's content.
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `echo key=${key}` }]], `my key is ${key}`),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const traj = `${await sandboxHome()}/t.json`;
    const r = await run(mock, repo, ["-t", traj, "-k", key]);
    assert.equal(r.code, 0, r.stderr);
    // The tool really printed the key: the model saw it (the mask is for the file, not the model).
    assert.match(JSON.stringify(mock.requests[1].body.messages), new RegExp(`key=${key}`));
    const text = await Deno.readTextFile(traj);
    assert.ok(!text.includes(key), "API key leaked into the trajectory");
    assert.ok(!text.includes(key.slice(0, 12)), "a prefix of the API key leaked");
    assert.match(text, /key=\*{3}/, "the tool output is recorded with the key masked");
    assert.match(text, /my key is \*{3}/, "the model's text is recorded with the key masked");
  } finally {
    await mock.close();
  }
});

Deno.test("openai provider: strict tool schemas and the SDK's request shape", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await run(mock, repo, [], "openai");
    assert.equal(r.code, 0, r.stderr);
    const req = mock.requests[0];
    assert.equal(req.path, "/v1/chat/completions");
    assert.equal(req.headers.get("authorization"), `Bearer ${KEY}`);
    const bash = req.body.tools.find((t: { function: { name: string } }) =>
      t.function.name === "bash"
    );
    assert.equal(bash.function.strict, true);
    assert.deepEqual(bash.function.parameters.required, [
      "command",
      "restart",
      "timeout",
      "run_in_background",
    ]);
    assert.equal(req.body.messages[0].role, "system");
    assert.match(req.body.messages[1].content, new RegExp(`\\[Project root path\\]:\\n${repo}`));
  } finally {
    await mock.close();
  }
});

Deno.test("anthropic provider: tool_result blocks with is_error, usage summed", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    anthropicToolUses([["str_replace_based_edit_tool", { command: "view", path: "relative.py" }]]),
    anthropicToolUses([["task_done", {}]], "done"),
  ]);
  try {
    const r = await run(mock, repo, [], "anthropic");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(mock.requests[0].path, "/v1/messages");
    // The SDK sends the key as x-api-key or, in recent versions, as a bearer token.
    const headers = mock.requests[0].headers;
    assert.ok(
      headers.get("x-api-key") === KEY || headers.get("authorization") === `Bearer ${KEY}`,
      "the API key reaches the server",
    );
    const second = mock.requests[1].body;
    assert.equal(typeof second.system, "string");
    const results = second.messages.at(-1).content;
    assert.equal(results[0].type, "tool_result");
    assert.equal(results[0].is_error, true);
    assert.match(results[0].content, /is not an absolute path/);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.usage.input_tokens, 400);
    assert.equal(summary.usage.cache_creation_input_tokens, 14);
  } finally {
    await mock.close();
  }
});

Deno.test("429 twice then 200: retried, and the run completes", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    httpError(429, { "retry-after": "0" }),
    httpError(429),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await run(mock, repo, []);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(mock.requests.length, 3);
    assert.match(r.stderr, /retry 1/);
  } finally {
    await mock.close();
  }
});

Deno.test("500 until retries run out: a clear final error and exit 1", async () => {
  const repo = await makeBuggyRepo();
  const home = await sandboxHome();
  await Deno.writeTextFile(
    `${home}/deft.yaml`,
    [
      "model_providers:",
      "  local:",
      "    provider: openai_compatible",
      `    base_url: ${"URL"}`,
      "models:",
      "  main:",
      "    model_provider: local",
      "    model: mock-model",
      "    max_retries: 2",
      "agents:",
      "  deft_agent:",
      "    model: main",
      "    max_steps: 5",
    ].join("\n"),
  );
  const mock = MockLLM.start([httpError(500), httpError(502), httpError(503), httpError(500)]);
  try {
    const text = (await Deno.readTextFile(`${home}/deft.yaml`)).replace("URL", `${mock.url}/v1`);
    await Deno.writeTextFile(`${home}/deft.yaml`, text);
    const r = await runDeft(["run", "do it", "-w", repo, "--json"], {
      cwd: home,
      env: { HOME: home, DEFT_RETRY_BASE_MS: "5" },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(mock.requests.length, 3);
    assert.match(JSON.parse(r.stdout).final_result, /gave up after 3 attempts/);
  } finally {
    await mock.close();
  }
});

Deno.test("a 400 is not retried", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([httpError(400), chatToolCalls([["task_done", {}]])]);
  try {
    const r = await run(mock, repo, []);
    assert.equal(r.code, 1);
    assert.equal(mock.requests.length, 1);
    assert.match(JSON.parse(r.stdout).final_result, /not retried/);
  } finally {
    await mock.close();
  }
});

Deno.test("bad tool calls become results the model can read; the run goes on", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["bash", "{not json"], ["no_such_tool", {}]]),
    chatText("I think I am finished."),
  ]);
  try {
    const r = await run(mock, repo, []);
    assert.equal(r.code, 0, r.stderr);
    const second = mock.requests[1].body.messages;
    const results = second.filter((m: { role: string }) => m.role === "tool");
    assert.match(results[0].content, /not valid JSON/);
    assert.match(results[1].content, /Tool 'no_such_tool' not found/);
    assertEveryCallAnswered(second);
    // Without --must-patch a reply in words is the answer: the run ends on it.
    assert.equal(mock.requests.length, 2);
    assert.equal(JSON.parse(r.stdout).final_result, "I think I am finished.");
  } finally {
    await mock.close();
  }
});

Deno.test("--must-patch refuses task_done on an empty diff and answers every call", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "true" }], ["task_done", {}]]),
    chatToolCalls([["bash", { command: `echo new > ${repo}/new_file.txt` }], ["task_done", {}]]),
  ]);
  try {
    const patchPath = `${await sandboxHome()}/p.diff`;
    const r = await run(mock, repo, ["--must-patch", "--patch-path", patchPath]);
    assert.equal(r.code, 0, r.stderr);
    const second = mock.requests[1].body.messages;
    assertEveryCallAnswered(second);
    assert.match(second.at(-1).content, /task_done was refused/);
    // New, untracked files are part of the patch.
    assert.match(await Deno.readTextFile(patchPath), /new file mode[\s\S]*\+new/);
  } finally {
    await mock.close();
  }
});

Deno.test("--must-patch: a model that never calls task_done runs out of steps: exit 1", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("hm"), chatText("hm"), chatText("hm")]);
  try {
    // Without --must-patch the first "hm" would be the answer; with it, words are nudged on.
    const r = await run(mock, repo, ["--must-patch", "--max-steps", "3"]);
    assert.equal(r.code, 1);
    assert.match(JSON.parse(r.stdout).final_result, /exceeded maximum steps/);
  } finally {
    await mock.close();
  }
});

Deno.test("configuration mistakes exit 2 with a message that says what to do", async () => {
  const home = await sandboxHome();
  const env = { HOME: home, ANTHROPIC_API_KEY: "" };
  const noKey = await runDeft(["run", "x", "-w", home], { cwd: home, env });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /No API key for provider 'anthropic': set ANTHROPIC_API_KEY/);

  await Deno.writeTextFile(
    `${home}/deft.yaml`,
    "modles: {}\nmodel_providers:\n  a:\n    provider: anthropic\n    api_key: k\n",
  );
  const typo = await runDeft(["config"], { cwd: home, env });
  assert.equal(typo.code, 0, typo.stderr);
  assert.match(typo.stderr, /unknown key 'modles' \(line 1, column 1\) is ignored/);

  await Deno.writeTextFile(
    `${home}/deft.yaml`,
    "models:\n  m:\n    model_provider: a\n    model: x\n    max_retries: lots\n",
  );
  const bad = await runDeft(["run", "x", "-w", home], { cwd: home, env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /'models\.m\.max_retries' \(line 5, column 5\)/);

  const missing = await runDeft(["run", "x", "--config-file", `${home}/nope.yaml`], {
    cwd: home,
    env,
  });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Config file not found/);

  const both = await runDeft(["run", "x", "-f", "task.txt"], { cwd: home, env });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /either as an argument or with --file/);
});

Deno.test("Ctrl-C mid-run: trajectory kept, tools closed, exit 130", async () => {
  const repo = await makeBuggyRepo();
  const home = await sandboxHome();
  // A duration no other test uses, so pgrep finds only this run's command; far longer than the
  // bound below, so an interrupt that leaves the tools running can't pass by waiting it out.
  const sleeper = `sleep 300.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: sleeper }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const traj = `${home}/t.json`;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../../main.ts", import.meta.url).pathname,
        ...mockRunArgs(mock, "wait", repo, { model: "m", apiKey: null, extra: ["-t", traj] }),
      ],
      env: { HOME: home, DENO_DIR: denoDir() },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // Wait until the bash step is under way (the first interaction is on disk).
    for (let i = 0; i < 100; i++) {
      const text = await Deno.readTextFile(traj).catch(() => "");
      if (text.includes(sleeper)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300));
    child.kill("SIGINT");
    // Closing the tools ends the sleep at once; 30 s is slack for a loaded machine.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((r) => timer = setTimeout(() => r(null), 30_000));
    const out = await Promise.race([child.output(), late]);
    clearTimeout(timer);
    if (out === null) {
      child.kill("SIGKILL");
      await child.status;
      await new Deno.Command("pkill", { args: ["-f", sleeper] }).output();
      assert.fail("deft run was still waiting for the tool 30 s after Ctrl-C: tools not closed");
    }
    assert.equal(out.code, 130, new TextDecoder().decode(out.stderr));
    const t = JSON.parse(await Deno.readTextFile(traj));
    assert.equal(t.success, false);
    assert.equal(t.final_result, "Interrupted by the user.");
    assert.equal(t.llm_interactions.length, 1);
    const ps = await new Deno.Command("pgrep", { args: ["-f", sleeper] }).output();
    assert.equal(
      new TextDecoder().decode(ps.stdout).trim(),
      "",
      `${sleeper} survived the interrupt`,
    );
  } finally {
    await mock.close();
  }
});

Deno.test("replay: a recorded run replays without divergence; a changed fixture is reported", async () => {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start(fixScript(repo));
  const traj = `${await sandboxHome()}/rec.json`;
  try {
    const r = await run(mock, repo, ["-t", traj]);
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await mock.close();
  }
  const home = await sandboxHome();
  await resetRepo(repo);
  const same = await runDeft(["run", "--replay", traj, "-w", repo, "--json"], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(same.code, 0, same.stderr);
  assert.deepEqual(JSON.parse(same.stdout).divergences, []);
  assert.match(same.stderr, /every tool result matches/);

  await resetRepo(repo);
  await Deno.writeTextFile(`${repo}/check.py`, "import calc\nprint('a different check')\n");
  const changed = await runDeft(["run", "--replay", traj, "-w", repo, "--json"], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(changed.code, 1);
  const divergences = JSON.parse(changed.stdout).divergences;
  assert.equal(divergences.length, 1);
  assert.equal(divergences[0].step, 3);
  assert.equal(divergences[0].tool, "bash");
  assert.match(changed.stderr, /step 3: bash/);
});
