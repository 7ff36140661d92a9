/**
 * Hooks end to end: `deft run` against the mock model, with command hooks in the user's config,
 * each a small bash script in the test's HOME.
 *
 * Promises of hooks, each with the test that guards it (here unless a file is named):
 * - a PreToolUse deny refuses the call and the model reads why: "a PreToolUse hook denies rm …"
 * - with two PreToolUse hooks, a deny from either refuses the call, whatever the other said, in
 *   either order: deny_wins_test.ts "two PreToolUse hooks: a deny from either refuses the call …"
 * - a rewrite runs instead of the call, the trajectory shows both: "a PreToolUse hook rewrites …"
 * - a garbage answer decides nothing, an invalid rewrite is refused: "a hook that answers …"
 * - a hook's `ask` is the ordinary question, even where the mode would not ask: ask_test.ts
 * - a hung hook is killed at its timeout with its processes; the call goes on: "a hook that
 *   hangs …"; sandbox_test.ts "a sandboxed hook that hangs …"; one that exits leaving a child on
 *   its pipe is done at once: runner_test.ts "a hook that answers and exits, leaving a child …"
 * - a Stop hook cannot keep a run going forever: "a Stop hook that always blocks …"
 * - a repository's hooks run nothing until its folder is trusted: "a repository's deft.yaml with
 *   hooks runs nothing until the folder is trusted"
 * - hooks run inside the session's sandbox unless `sandbox: none`: sandbox_test.ts "finding 3: …",
 *   "finding 4: …"; an outside hook whose program lies in the workspace is refused:
 *   sandbox_test.ts "a `sandbox: none` hook whose program lies in the workspace …"
 * - what a hook says for the user reaches the terminal inert and masked: runner_test.ts "what a
 *   hook says for the user …"
 * - `continue: false` stops the run, nothing lost: lifecycle_test.ts "continue: false on …" (four)
 * - a settings file to import is read with a bound, never waited on: import_read_test.ts
 */
import assert from "node:assert/strict";
import { runDeft, runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

const SERVER = new URL("../../fixtures/mcp/stdio_server.ts", import.meta.url).pathname;

/** A HOME whose user config holds `hooksYaml` (the `hooks:` key's body), and its scripts. */
async function homeWith(hooksYaml: string, scripts: Record<string, string> = {}, extra = "") {
  return await trustedHomeWith(
    "deft-hooks-",
    (home) => `hooks:\n${hooksYaml.replaceAll("$HOME_DIR", home)}\n${extra}`,
    scripts,
  );
}

interface Step {
  tool_calls: { name: string; arguments: Record<string, unknown> }[];
  tool_results: {
    success: boolean;
    result: string | null;
    error: string | null;
    approval?: Record<string, unknown>;
  }[];
}

async function runWith(home: string, repo: string, replies: MockReply[]) {
  const mock = MockLLM.start(replies);
  const traj = `${home}/t.json`;
  try {
    const started = Date.now();
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["-t", traj],
    });
    const seconds = (Date.now() - started) / 1000;
    const trajectory = JSON.parse(await Deno.readTextFile(traj).catch(() => "{}"));
    const steps: Step[] = trajectory.agent_steps ?? [];
    const toolMessages = (i: number) =>
      (mock.requests[i]?.body.messages ?? []).filter((m: { role: string }) => m.role === "tool")
        .map((m: { content: string }) => m.content);
    return { r, mock, steps, toolMessages, seconds };
  } finally {
    await mock.close();
  }
}

const DENY_RM = `#!/bin/bash
input=$(cat)
if printf '%s' "$input" | grep -q '"command":"rm '; then
  echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rm is not allowed in this project"}}'
fi
exit 0
`;

Deno.test("a PreToolUse hook denies rm: the file stays, the model reads the reason, the decision names the hook", async () => {
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: "bash"\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/deny.sh" }`,
    { "deny.sh": DENY_RM },
  );
  const repo = await makeBuggyRepo();
  const { r, steps, toolMessages } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "rm calc.py" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await Deno.stat(`${repo}/calc.py`), "the hook let rm run");
  assert.match(toolMessages(1)[0], /rm is not allowed in this project/);
  const approval = steps[0].tool_results[0].approval!;
  assert.equal(approval.decided_by, "hook");
  assert.equal(approval.decision, "deny");
  assert.match(JSON.stringify(approval.hook), /deny\.sh/);
});

Deno.test("a PreToolUse hook rewrites a command: the rewrite runs, the trajectory shows both", async () => {
  const rewrite = `#!/bin/bash
cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten-by-hook"}}}'
`;
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: "^bash$"\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/rewrite.sh" }`,
    { "rewrite.sh": rewrite },
  );
  const repo = await makeBuggyRepo();
  const { r, steps, toolMessages } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "echo original" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(toolMessages(1)[0], /rewritten-by-hook/);
  assert.doesNotMatch(toolMessages(1)[0], /original/);
  assert.equal(steps[0].tool_calls[0].arguments.command, "echo original");
  const approval = steps[0].tool_results[0].approval!;
  assert.deepEqual(approval.updated_input, { command: "echo rewritten-by-hook" });
});

Deno.test("a hook that answers garbage is reported and decides nothing; an invalid rewrite is refused", async () => {
  const garbage = `#!/bin/bash\ncat >/dev/null\necho 'this is { not json'\n`;
  const badRewrite = `#!/bin/bash
input=$(cat)
if printf '%s' "$input" | grep -q 'second'; then
  echo '{"hookSpecificOutput":{"updatedInput":{"command":5}}}'
fi
`;
  const home = await homeWith(
    `  PreToolUse:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/garbage.sh" }\n        - { type: command, command: "bash $HOME_DIR/bad.sh" }`,
    { "garbage.sh": garbage, "bad.sh": badRewrite },
  );
  const repo = await makeBuggyRepo();
  const { r, steps, toolMessages } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "echo first" }]]),
    chatToolCalls([["bash", { command: "echo second" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /garbage\.sh.*not a JSON object/);
  assert.match(toolMessages(1)[0], /first/);
  assert.notEqual(steps[0].tool_results[0].approval?.decided_by, "hook");
  assert.match(toolMessages(2)[1], /does not accept/);
  assert.equal(steps[1].tool_results[0].success, false);
});

Deno.test("a hook that hangs is killed at its timeout with its process group; the call goes on", async () => {
  const hang = `#!/bin/bash
cat >/dev/null
sleep 300 &
echo $! > "$HOME/hook-child.pid"
wait
`;
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/hang.sh", timeout: 1, sandbox: none }`,
    { "hang.sh": hang },
  );
  const repo = await makeBuggyRepo();
  const { r, toolMessages, seconds } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "echo still-ran" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(seconds < 60, `the run took ${seconds} s`);
  assert.match(r.stderr, /did not finish in 1 s; killed/);
  assert.match(toolMessages(1)[0], /still-ran/);
  const pid = Number((await Deno.readTextFile(`${home}/hook-child.pid`)).trim());
  let alive = true;
  for (let i = 0; i < 20 && alive; i++) {
    alive = isRunning(pid);
    if (alive) await new Promise((ok) => setTimeout(ok, 100));
  }
  if (alive) Deno.kill(pid, "SIGKILL");
  assert.ok(!alive, "the hook's child outlived the timeout");
});

Deno.test("a PostToolUse hook that exits 2: the model reads its stderr with the result", async () => {
  const post =
    `#!/bin/bash\ncat >/dev/null\necho "post-hook says the output is wrong" >&2\nexit 2\n`;
  const home = await homeWith(
    `  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/post.sh" }`,
    { "post.sh": post },
  );
  const repo = await makeBuggyRepo();
  const { r, toolMessages, steps } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "echo ran-anyway" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(toolMessages(1)[0], /post-hook says the output is wrong/);
  assert.match(toolMessages(1)[0], /ran-anyway/);
  assert.equal(steps[0].tool_results[0].success, false);
});

Deno.test("a PreToolUse hook on an MCP tool (mcp__SERVER__TOOL) denies it", async () => {
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: "mcp__fx__.*"\n      hooks:\n        - { type: command, command: "cat >/dev/null; echo no MCP echo today >&2; exit 2" }`,
    {},
    `mcp_servers:\n  fx:\n    command: ${
      JSON.stringify(Deno.execPath())
    }\n    args: ["run", "-A", ${JSON.stringify(SERVER)}]\nallow_mcp_servers: [fx]\n`,
  );
  const repo = await makeBuggyRepo();
  const { r, toolMessages } = await runWith(home, repo, [
    chatToolCalls([["mcp__fx__echo", { text: "hi", times: 2 }]]),
    chatToolCalls([["bash", { command: "echo bash-unaffected" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(toolMessages(1)[0], /no MCP echo today/);
  assert.doesNotMatch(toolMessages(1)[0], /hihi/);
  assert.match(toolMessages(2)[1], /bash-unaffected/);
});

Deno.test("a Stop hook sends the model back once, with its reason", async () => {
  const stop = `#!/bin/bash
cat >/dev/null
if [ ! -e "$HOME/stopped-once" ]; then
  touch "$HOME/stopped-once"
  echo '{"decision":"block","reason":"also run the checks before stopping"}'
fi
`;
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/stop.sh", sandbox: none }`,
    { "stop.sh": stop },
  );
  const repo = await makeBuggyRepo();
  const { r, mock } = await runWith(home, repo, [
    chatToolCalls([["task_done", {}]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(mock.requests.length, 2);
  const last = mock.requests[1].body.messages.at(-1);
  assert.equal(last.role, "user");
  assert.match(last.content, /also run the checks before stopping/);
});

Deno.test("a Stop hook that always blocks cannot keep a run going forever", async () => {
  const home = await homeWith(
    `  Stop:\n    - hooks:\n        - { type: command, command: "echo '{\\"decision\\":\\"block\\",\\"reason\\":\\"again\\"}'" }`,
  );
  const repo = await makeBuggyRepo();
  const replies = Array.from({ length: 10 }, () => chatToolCalls([["task_done", {}]]));
  const { r, mock } = await runWith(home, repo, replies);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(mock.requests.length, 4, "one run and three continuations");
});

Deno.test("a repository's deft.yaml with hooks runs nothing until the folder is trusted", async () => {
  const home = await homeWith(`  {}`);
  // The user's config trusts HOME only; the repository is another folder.
  const repo = await makeBuggyRepo();
  await Deno.writeTextFile(
    `${repo}/deft.yaml`,
    `hooks:\n  PreToolUse:\n    - hooks:\n        - { type: command, command: "cat >/dev/null; touch ${repo}/repo-hook-ran" }\n`,
  );
  const replies = () => [
    chatToolCalls([["bash", { command: "echo hi" }]]),
    chatToolCalls([["task_done", {}]]),
  ];
  const mock = MockLLM.start([...replies(), ...replies()]);
  try {
    const first = await runMocked(mock, "do it", repo, { cwd: repo, env: { HOME: home } });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /not trusted[^\n]*\bhooks\b/, "the ignored key is named");
    assert.equal(await Deno.stat(`${repo}/repo-hook-ran`).then(() => true, () => false), false);
    const trust = await runDeft(["trust", repo], { cwd: repo, env: { HOME: home } });
    assert.equal(trust.code, 0, trust.stderr);
    const second = await runMocked(mock, "do it", repo, { cwd: repo, env: { HOME: home } });
    assert.equal(second.code, 0, second.stderr);
    // The hook runs sandboxed: it marks the workspace, the one place it may write.
    assert.ok(await Deno.stat(`${repo}/repo-hook-ran`), "the trusted repository's hook ran");
  } finally {
    await mock.close();
  }
});

Deno.test("a Claude Code settings file imported: deft hooks lists it and the same deny happens", async () => {
  const home = await homeWith(`  {}`, { "deny.sh": DENY_RM });
  const claude = {
    hooks: {
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [{ type: "command", command: `bash ${home}/deny.sh`, timeout: 10 }],
        },
        { matcher: "Glob|Grep", hooks: [{ type: "command", command: "true" }] },
      ],
      Notification: [{ hooks: [{ type: "command", command: "notify-send hi" }] }],
    },
  };
  await Deno.writeTextFile(`${home}/settings.json`, JSON.stringify(claude));
  const imported = await runDeft(["hooks", "import", `${home}/settings.json`], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(imported.code, 0, imported.stderr);
  assert.match(imported.stderr, /Glob has no Deft tool/);
  assert.match(imported.stderr, /Notification/);
  assert.match(imported.stdout, /matcher: bash/);
  // The imported YAML replaces the empty hooks key of the user's config.
  const path = `${home}/.config/deft/config.yaml`;
  const text = (await Deno.readTextFile(path)).replace("hooks:\n  {}\n", "");
  await Deno.writeTextFile(path, text + imported.stdout);
  const listed = await runDeft(["hooks"], { cwd: home, env: { HOME: home } });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    /PreToolUse\tbash\tbash .*deny\.sh\t(un)?sandboxed [^\t]*\ttimeout 10s\tfrom .*config\.yaml/,
  );
  const repo = await makeBuggyRepo();
  const { r, toolMessages } = await runWith(home, repo, [
    chatToolCalls([["bash", { command: "rm calc.py" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await Deno.stat(`${repo}/calc.py`));
  assert.match(toolMessages(1)[0], /rm is not allowed in this project/);
});

/** Whether process `pid` exists (a harmless SIGCONT: an error says it does not). */
function isRunning(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("prompt hooks: SessionStart and UserPromptSubmit add context; a blocked prompt never reaches the model", async () => {
  const prompt = `#!/bin/bash
input=$(cat)
if printf '%s' "$input" | grep -q 'forbidden'; then echo "no forbidden prompts" >&2; exit 2; fi
echo "context from the prompt hook"
`;
  const home = await homeWith(
    `  SessionStart:\n    - hooks:\n        - { type: command, command: "echo context from session start" }\n  UserPromptSubmit:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/prompt.sh" }`,
    { "prompt.sh": prompt },
  );
  const repo = await makeBuggyRepo();
  const { r, mock } = await runWith(home, repo, [chatToolCalls([["task_done", {}]])]);
  assert.equal(r.code, 0, r.stderr);
  const user = JSON.stringify(mock.requests[0].body.messages);
  assert.match(user, /context from session start/);
  assert.match(user, /context from the prompt hook/);
  const blocked = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const b = await runMocked(blocked, "a forbidden task", repo, {
      cwd: home,
      env: { HOME: home },
    });
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, /no forbidden prompts/);
    assert.equal(blocked.requests.length, 0, "the blocked prompt reached the model");
  } finally {
    await blocked.close();
  }
});

Deno.test("a hook sees the core variables and DEFT_PROJECT_DIR, a key only when its env names it; megabytes are cut", async () => {
  const dump = `#!/bin/bash\ncat >/dev/null\nenv > "$HOME/env-$1.txt"\n`;
  const flood = `#!/bin/bash\ncat >/dev/null\nhead -c 5000000 /dev/zero | tr '\\\\0' x\n`;
  const home = await homeWith(
    `  PreToolUse:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/dump.sh plain", sandbox: none }\n        - { type: command, command: "bash $HOME_DIR/dump.sh named", env: [DEFT_HOOK_TEST_API_KEY], sandbox: none }\n        - { type: command, command: "bash $HOME_DIR/flood.sh" }`,
    { "dump.sh": dump, "flood.sh": flood },
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo ok" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home, DEFT_HOOK_TEST_API_KEY: "sk-hook-secret", DEFT_HOOK_PLAIN: "p" },
    });
    assert.equal(r.code, 0, r.stderr);
    const plain = await Deno.readTextFile(`${home}/env-plain.txt`);
    assert.match(plain, new RegExp(`^DEFT_PROJECT_DIR=${repo}$`, "m"));
    assert.match(plain, /^HOME=/m);
    assert.doesNotMatch(plain, /sk-hook-secret|DEFT_HOOK_PLAIN/);
    const named = await Deno.readTextFile(`${home}/env-named.txt`);
    assert.match(named, /^DEFT_HOOK_TEST_API_KEY=sk-hook-secret$/m);
    assert.match(r.stderr, /flood\.sh.*output was cut/);
  } finally {
    await mock.close();
  }
});

Deno.test("deft serve runs PreToolUse hooks too: the denied call comes back with the reason", async () => {
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/deny.sh" }`,
    { "deny.sh": DENY_RM },
  );
  const repo = await makeBuggyRepo();
  const input = [
    { id: 1, name: "bash", arguments: { command: "rm calc.py" } },
    { id: 2, name: "bash", arguments: { command: "echo served" } },
  ].map((c) => JSON.stringify(c)).join("\n") + "\n";
  const run = await runDeft(["serve", "-w", repo], {
    stdin: input,
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(run.code, 0, run.stderr);
  const out = run.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(out[0].success, false);
  assert.match(out[0].error, /rm is not allowed in this project/);
  assert.match(out[1].output, /served/);
  assert.ok(await Deno.stat(`${repo}/calc.py`));
});
