/**
 * The session's own hook events end to end, against the mock model: SessionEnd at the end of
 * `deft run`, `deft interactive` and `deft serve` (Claude Code's `reason`, bounded by its
 * timeout), PreCompact before `/compact` and before the automatic shortening, and
 * `continue: false`, which stops the run whatever the event, with its reason shown, recorded in
 * the trajectory and the `--json` summary, and nothing lost (patch written).
 */
import assert from "node:assert/strict";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import {
  denoDir,
  interactiveOnStdin,
  mockRunArgs,
  REPO_ROOT,
  runDeft,
  runMocked,
  trustedHomeWith,
} from "../../helpers/deft.ts";
import { eventually } from "../../helpers/bash.ts";
import { chatText, chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

/** A HOME whose user config holds `hooksYaml` (the `hooks:` key's body) and `extra` keys. */
async function homeWith(hooksYaml: string, scripts: Record<string, string> = {}, extra = "") {
  return await trustedHomeWith(
    "deft-hooks-life-",
    (home) => `hooks:\n${hooksYaml.replaceAll("$HOME_DIR", home)}\n${extra}`,
    scripts,
  );
}

/**
 * A hook that appends its stdin (one JSON object) as a line to $HOME/NAME.jsonl: a log in ~, so
 * it runs outside the sandbox (`sandbox: none` in its entry).
 */
const RECORD = `#!/bin/bash\ncat >> "$HOME/$1.jsonl"\necho >> "$HOME/$1.jsonl"\n`;

async function recorded(home: string, name: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${home}/${name}.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
}

async function run(home: string, repo: string, replies: MockReply[], extra: string[] = []) {
  const mock = MockLLM.start(replies);
  const traj = `${home}/t.json`;
  try {
    const started = Date.now();
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["-t", traj, ...extra],
    });
    const seconds = (Date.now() - started) / 1000;
    const trajectory = JSON.parse(await Deno.readTextFile(traj).catch(() => "{}"));
    return { r, mock, trajectory, seconds };
  } finally {
    await mock.close();
  }
}

Deno.test("SessionEnd runs once when deft run ends: reason other, Deft's reason, the session's ids", async () => {
  const home = await homeWith(
    `  SessionEnd:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh end", sandbox: none }`,
    { "record.sh": RECORD },
  );
  const repo = await makeBuggyRepo();
  const { r, trajectory } = await run(home, repo, [chatToolCalls([["task_done", {}]])]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /not run by this version/);
  const ends = await recorded(home, "end");
  assert.equal(ends.length, 1, "SessionEnd ran once");
  assert.equal(ends[0].hook_event_name, "SessionEnd");
  assert.equal(ends[0].reason, "other");
  assert.equal(ends[0].deft_reason, "completed");
  assert.equal(ends[0].session_id, trajectory.session_id);
  assert.equal(ends[0].transcript_path, `${home}/t.json`);
  assert.equal(ends[0].cwd, repo);
});

Deno.test("a SessionEnd hook that hangs delays the end no more than its timeout; it cannot block", async () => {
  const hang =
    `#!/bin/bash\ncat >/dev/null\necho started > "$HOME/hang-started"\nsleep 60 &\nsleep 60\n`;
  const block =
    `#!/bin/bash\ncat >/dev/null\necho '{"continue":false,"stopReason":"no"}'\nexit 2\n`;
  const home = await homeWith(
    `  SessionEnd:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/hang.sh", timeout: 2, sandbox: none }\n        - { type: command, command: "bash $HOME_DIR/block.sh" }`,
    { "hang.sh": hang, "block.sh": block },
  );
  const repo = await makeBuggyRepo();
  const { r, seconds } = await run(home, repo, [chatToolCalls([["task_done", {}]])], ["--json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await Deno.stat(`${home}/hang-started`), "the SessionEnd hook never ran");
  assert.ok(seconds < 15, `the end waited ${seconds} s for a hook with a 2 s timeout`);
  assert.match(r.stderr, /SessionEnd hook .*hang\.sh.*did not finish in 2 s/);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.success, true);
  assert.equal(summary.stopped_by_hook, undefined, "a SessionEnd hook stopped something");
});

Deno.test("continue: false on PostToolUse stops the run: reason shown, recorded, --json says so, the patch is written", async () => {
  const stop = `#!/bin/bash
cat >/dev/null
echo '{"continue":false,"stopReason":"budget for today is spent","decision":"block","reason":"ignored"}'
`;
  const home = await homeWith(
    `  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/stop.sh" }`,
    { "stop.sh": stop },
  );
  const repo = await makeBuggyRepo();
  const patch = `${home}/out.patch`;
  const { r, mock, trajectory } = await run(home, repo, [
    chatToolCalls([["bash", { command: "echo made > made.txt" }]]),
    chatToolCalls([["bash", { command: "echo more > more.txt" }]]),
    chatToolCalls([["task_done", {}]]),
  ], ["--json", "--patch-path", patch]);
  assert.equal(r.code, 1, "a stopped run is no success");
  assert.equal(mock.requests.length, 1, "the model was asked again after the stop");
  await assert.rejects(Deno.stat(`${repo}/more.txt`));
  assert.match(r.stderr, /Stopped by PostToolUse hook .*stop\.sh.*budget for today is spent/);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.stopped_by_hook.event, "PostToolUse");
  assert.equal(summary.stopped_by_hook.reason, "budget for today is spent");
  assert.match(summary.stopped_by_hook.hook, /stop\.sh/);
  assert.equal(trajectory.hook_stop.reason, "budget for today is spent");
  assert.match(trajectory.final_result, /budget for today is spent/);
  assert.equal(trajectory.success, false);
  assert.match(await Deno.readTextFile(patch), /made\.txt/);
});

Deno.test("continue: false on PreToolUse: the call does not run and the run stops", async () => {
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "echo '{\\"continue\\":false,\\"stopReason\\":\\"maintenance window\\"}'" }`,
  );
  const repo = await makeBuggyRepo();
  const { r, mock, trajectory } = await run(home, repo, [
    chatToolCalls([["bash", { command: "echo x > pre.txt" }]]),
    chatToolCalls([["task_done", {}]]),
  ], ["--json"]);
  assert.equal(r.code, 1);
  assert.equal(mock.requests.length, 1);
  await assert.rejects(Deno.stat(`${repo}/pre.txt`), "the stopped call ran");
  assert.equal(JSON.parse(r.stdout).stopped_by_hook.event, "PreToolUse");
  assert.match(trajectory.final_result, /maintenance window/);
});

Deno.test("continue: false on Stop takes precedence over its block: the model is not sent back", async () => {
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "echo '{\\"decision\\":\\"block\\",\\"reason\\":\\"go on\\",\\"continue\\":false,\\"stopReason\\":\\"release freeze\\"}'" }`,
  );
  const repo = await makeBuggyRepo();
  const { r, mock, trajectory } = await run(home, repo, [
    chatToolCalls([["task_done", {}]]),
    chatToolCalls([["task_done", {}]]),
  ], ["--json"]);
  assert.equal(mock.requests.length, 1, "the Stop hook's block sent the model back");
  assert.match(r.stderr, /Stopped by Stop hook .*release freeze/);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.stopped_by_hook.reason, "release freeze");
  assert.equal(trajectory.hook_stop.event, "Stop");
});

Deno.test("continue: false on UserPromptSubmit: the prompt never reaches the model", async () => {
  const home = await homeWith(
    `  UserPromptSubmit:\n    - hooks:\n        - { type: command, command: "echo '{\\"continue\\":false,\\"stopReason\\":\\"not today\\"}'" }`,
  );
  const repo = await makeBuggyRepo();
  const { r, mock } = await run(home, repo, [chatToolCalls([["task_done", {}]])], ["--json"]);
  assert.equal(r.code, 1);
  assert.equal(mock.requests.length, 0);
  assert.equal(JSON.parse(r.stdout).stopped_by_hook.reason, "not today");
});

Deno.test("PreCompact (auto) runs before the conversation is shortened; a block keeps it whole, asked once per window crossing", async () => {
  for (const blocking of [false, true]) {
    const hook = blocking
      ? `bash $HOME_DIR/record.sh compact; echo keep it >&2; exit 2`
      : `bash $HOME_DIR/record.sh compact`;
    let step = 0;
    const mock = MockLLM.start([], (req) => {
      step++;
      const reply = step >= 6 ? chatToolCalls([["task_done", {}]]) : chatToolCalls([[
        "bash",
        { command: `printf 'line %s\\n' $(seq 1 600) # step ${step}` },
      ]]);
      // The provider's count, as a real one would report it (the estimate calibrates on it).
      (reply.body as { usage: { prompt_tokens: number } }).usage.prompt_tokens = Math.ceil(
        JSON.stringify(req.body).length / 4,
      );
      return reply;
    });
    const home = await homeWith(
      `  PreCompact:\n    - matcher: auto\n      hooks:\n        - { type: command, command: "${hook}", sandbox: none }`,
      { "record.sh": RECORD },
      `model_providers:\n  m: { provider: openai_compatible, base_url: "${mock.url}/v1", api_key: k }\n` +
        `models:\n  m: { model_provider: m, model: mock, max_retries: 0, context_window: 4000, max_tokens: 500 }\n` +
        `agents:\n  deft_agent: { model: m, max_steps: 10, tools: [bash, task_done] }\n`,
    );
    const repo = await makeBuggyRepo();
    try {
      const traj = `${home}/t.json`;
      const r = await runDeft(["run", "loop", "-w", repo, "-t", traj], {
        cwd: home,
        env: { HOME: home },
      });
      const trajectory = JSON.parse(await Deno.readTextFile(traj));
      const fired = await recorded(home, "compact");
      assert.ok(fired.length > 0, `PreCompact never ran (blocking: ${blocking}): ${r.stderr}`);
      assert.equal(fired[0].trigger, "auto");
      assert.equal(fired[0].custom_instructions, "");
      if (blocking) {
        assert.equal(trajectory.context_events, undefined, "a blocked compaction shortened");
        assert.match(r.stderr, /PreCompact hook .* kept the conversation as it is: keep it/);
        // Bounded: while the conversation stays over the window the block holds, unasked.
        assert.equal(fired.length, 1, `a blocking PreCompact hook ran ${fired.length} times`);
        assert.equal(r.stderr.match(/kept the conversation as it is/g)?.length, 1, r.stderr);
        assert.ok(step >= 6, "the run did not go on after the block");
      } else {
        assert.ok(trajectory.context_events?.length > 0, "nothing was shortened");
        // Each crossing of the window asks again (the shortened conversation grows back over it).
        assert.ok(fired.length > 1, `PreCompact ran ${fired.length} time(s) over ${step} steps`);
      }
    } finally {
      await mock.close();
    }
  }
});

Deno.test("interactive: /compact runs PreCompact (manual, its instructions); /exit runs SessionEnd (prompt_input_exit)", async () => {
  const home = await homeWith(
    `  PreCompact:\n    - matcher: manual\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh compact", sandbox: none }\n` +
      `  SessionEnd:\n    - matcher: prompt_input_exit\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh end", sandbox: none }`,
    { "record.sh": RECORD },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("hello"), chatText("the summary")]);
  try {
    const r = await interactiveOnStdin(repo, mock, "hi\n/compact keep the file names\n/exit\n", {
      args: ["--approval", "never"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    const compact = await recorded(home, "compact");
    assert.equal(compact.length, 1, r.stderr);
    assert.equal(compact[0].trigger, "manual");
    assert.equal(compact[0].custom_instructions, "keep the file names");
    assert.match(JSON.stringify(mock.requests[1].body.messages[0]), /keep the file names/);
    const ends = await recorded(home, "end");
    assert.equal(ends.length, 1);
    assert.equal(ends[0].reason, "prompt_input_exit");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive: a PreCompact hook that blocks leaves the conversation unchanged", async () => {
  const home = await homeWith(
    `  PreCompact:\n    - hooks:\n        - { type: command, command: "echo '{\\"decision\\":\\"block\\",\\"reason\\":\\"audit first\\"}'" }`,
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("hello"), chatText("the summary"), chatText("again")]);
  try {
    const r = await interactiveOnStdin(repo, mock, "hi\n/compact\nnext\nexit\n", {
      args: ["--approval", "never"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /not compacted: PreCompact hook .* blocked it: audit first/);
    assert.equal(mock.requests.length, 2, "the summary was asked for");
    const sent = JSON.stringify(mock.requests[1].body.messages);
    assert.match(sent, /"hello"/, "the first turn is gone");
    assert.doesNotMatch(sent, /Summary of the conversation so far/);
  } finally {
    await mock.close();
  }
});

Deno.test("deft serve and deft mcp run SessionEnd when their input ends", async () => {
  const home = await homeWith(
    `  SessionEnd:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh end", sandbox: none }`,
    { "record.sh": RECORD },
  );
  const repo = await makeBuggyRepo();
  const served = await runDeft(["serve", "-w", repo], {
    stdin: JSON.stringify({ id: 1, name: "bash", arguments: { command: "echo hi" } }) + "\n",
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(served.code, 0, served.stderr);
  const mcp = await runDeft(["mcp", "-w", repo], { stdin: "", cwd: home, env: { HOME: home } });
  assert.equal(mcp.code, 0, mcp.stderr);
  const ends = await recorded(home, "end");
  assert.deepEqual(ends.map((e) => [e.reason, e.deft_reason]), [
    ["other", "input_closed"],
    ["other", "connection_closed"],
  ]);
});

Deno.test("SIGTERM during a run: SessionEnd still runs, bounded to a few seconds whatever its timeout", async () => {
  const slow = `#!/bin/bash\ncat > "$HOME/end.json"\nsleep 50\n`;
  const home = await homeWith(
    `  SessionEnd:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/slow.sh", timeout: 120, sandbox: none }`,
    { "slow.sh": slow },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([], () => chatToolCalls([["bash", { command: "sleep 300" }]]));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...mockRunArgs(mock, "wait", repo)],
    cwd: home,
    env: { HOME: home, NO_COLOR: "1", DENO_DIR: denoDir() },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  try {
    assert.ok(await eventually(() => Promise.resolve(mock.requests.length >= 1), 30_000));
    await new Promise((r) => setTimeout(r, 1500));
    const signalled = Date.now();
    child.kill("SIGTERM");
    const out = await child.output();
    const seconds = (Date.now() - signalled) / 1000;
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 143, stderr);
    const end = JSON.parse(await Deno.readTextFile(`${home}/end.json`));
    assert.equal(end.deft_reason, "interrupted");
    assert.ok(seconds < 20, `the exit waited ${seconds} s for a SessionEnd hook`);
    assert.match(stderr, /SessionEnd hook .*slow\.sh.*did not finish in 5 s/);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await mock.close();
  }
});

Deno.test("SIGTERM ends deft interactive: SessionEnd runs first (reason other, signal SIGTERM)", async () => {
  const home = await homeWith(
    `  SessionEnd:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh end", sandbox: none }`,
    { "record.sh": RECORD },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("hello")]);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      "interactive",
      "-w",
      repo,
      "--approval",
      "never",
      ...mockModelArgs(mock),
    ],
    cwd: home,
    env: { HOME: home, NO_COLOR: "1", DENO_DIR: denoDir() },
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode("hi\n"));
    assert.ok(await eventually(() => Promise.resolve(mock.requests.length >= 1), 30_000));
    await new Promise((r) => setTimeout(r, 1500));
    child.kill("SIGTERM");
    const out = await child.output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 143, `exit ${out.code}: ${stderr}`);
    const ends = await recorded(home, "end");
    assert.equal(ends.length, 1, stderr);
    assert.equal(ends[0].reason, "other");
    assert.equal(ends[0].deft_reason, "signal SIGTERM");
  } finally {
    await writer.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await mock.close();
  }
});
