/**
 * SessionStart's `source`, as Claude Code's hooks reference has it: `startup` for a new session,
 * `resume` for one continued (`deft run --continue`, `deft interactive -c`, `/resume`, ACP
 * `session/load`), `clear` after `/clear`, `compact` after `/compact`. The matcher matches the
 * source, and the hooks' context reaches the model's next request each time.
 */
import assert from "node:assert/strict";
import { interactiveOnStdin, runDeft, runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatStream, chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import { withAcp } from "../../helpers/acp_client.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

/**
 * Records each SessionStart input in $HOME/start.jsonl and answers with the context
 * `START-<source>`; a second group, matched on `resume` only, prints `ONLY-ON-RESUME`.
 */
async function startHome(): Promise<string> {
  const home = await trustedHome("deft-hooks-start-");
  await Deno.writeTextFile(
    `${home}/start.sh`,
    `#!/bin/bash
input=$(cat)
printf '%s\\n' "$input" >> "$HOME/start.jsonl"
src=$(printf '%s' "$input" | sed -n 's/.*"source":"\\([a-z]*\\)".*/\\1/p')
printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"START-%s"}}\\n' "$src"
`,
  );
  const path = `${home}/.config/deft/config.yaml`;
  await Deno.writeTextFile(
    path,
    (await Deno.readTextFile(path)) +
      `hooks:\n  SessionStart:\n    - hooks:\n        - { type: command, command: "bash ${home}/start.sh", sandbox: none }\n` +
      `    - matcher: resume\n      hooks:\n        - { type: command, command: "echo ONLY-ON-RESUME" }\n`,
  );
  return home;
}

async function sources(home: string): Promise<string[]> {
  const text = await Deno.readTextFile(`${home}/start.jsonl`).catch(() => "");
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l).source);
}

/** The text of the last user message of a request the mock received. */
function lastUser(request: { body: { messages: { role: string; content: unknown }[] } }): string {
  const users = request.body.messages.filter((m) => m.role === "user");
  return JSON.stringify(users.at(-1)?.content ?? "");
}

Deno.test("deft run: SessionStart says startup; deft run --continue says resume, and its context reaches the model", async () => {
  const home = await startHome();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatToolCalls([["task_done", {}]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const first = await runMocked(mock, "first task", repo, { cwd: home, env: { HOME: home } });
    assert.equal(first.code, 0, first.stderr);
    const second = await runMocked(mock, "second task", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["--continue"],
    });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /resuming session/);
    assert.deepEqual(await sources(home), ["startup", "resume"]);
    assert.match(lastUser(mock.requests[0]), /START-startup/);
    assert.doesNotMatch(lastUser(mock.requests[0]), /ONLY-ON-RESUME/);
    const resumed = lastUser(mock.requests[1]);
    assert.match(resumed, /second task/);
    assert.match(resumed, /START-resume/);
    assert.match(resumed, /ONLY-ON-RESUME/, "the matcher `resume` did not select the resume");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive: /clear and /compact start the conversation over: SessionStart clear, then compact, each context in the next request", async () => {
  const home = await startHome();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([
    chatText("one"),
    chatText("two"),
    chatText("the summary"),
    chatText("three"),
    chatText("four"),
  ]);
  try {
    const r = await interactiveOnStdin(
      repo,
      mock,
      "hi\n/clear\nafter clear\n/compact\nafter compact\nplain turn\n/exit\n",
      { args: ["--approval", "never"], cwd: home, env: { HOME: home } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await sources(home), ["startup", "clear", "compact"], r.stderr);
    assert.equal(mock.requests.length, 5, r.stderr);
    assert.match(lastUser(mock.requests[0]), /hi[\s\S]*START-startup/);
    assert.match(lastUser(mock.requests[1]), /after clear[\s\S]*START-clear/);
    // requests[2] is the summary /compact asked for.
    assert.match(lastUser(mock.requests[3]), /after compact[\s\S]*START-compact/);
    assert.doesNotMatch(lastUser(mock.requests[4]), /START-/, "SessionStart ran on a plain turn");
  } finally {
    await mock.close();
  }
});

Deno.test("interactive -c: SessionStart says resume (the resume matcher selects it)", async () => {
  const home = await startHome();
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("one"), chatText("two"), chatText("three")]);
  try {
    const first = await interactiveOnStdin(repo, mock, "hi\n/exit\n", {
      args: ["--approval", "never"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(first.code, 0, first.stderr);
    const again = await runDeft(
      ["interactive", "-c", "-w", repo, "--approval", "never", ...mockModelArgs(mock)],
      { cwd: home, env: { HOME: home }, stdin: "go on\n/exit\n" },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await sources(home), ["startup", "resume"], again.stderr);
    const resumed = lastUser(mock.requests[1]);
    assert.match(resumed, /go on[\s\S]*START-resume/);
    assert.match(resumed, /ONLY-ON-RESUME/);
  } finally {
    await mock.close();
  }
});

Deno.test("acp: session/new says startup, session/load says resume, with the context in the next request", async () => {
  await using dir = await tempDir("deft-acp-start-");
  const home = await startHome();
  const mock = MockLLM.start([chatStream(chatText("first")), chatStream(chatText("second"))]);
  try {
    const first = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request("session/new", { cwd: dir.path, mcpServers: [] });
      await ctx.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "hello" }],
      });
      return sessionId;
    }, { home });
    assert.equal(first.code, 0, first.run.stderr());
    const second = await withAcp(mock, ["--approval", "never"], [], async (ctx) => {
      await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      await ctx.request("session/load", { sessionId: first.value, cwd: dir.path, mcpServers: [] });
      return await ctx.request("session/prompt", {
        sessionId: first.value,
        prompt: [{ type: "text", text: "again" }],
      });
    }, { home });
    assert.equal(second.value.stopReason, "end_turn", second.run.stderr());
    assert.deepEqual(await sources(home), ["startup", "resume"], second.run.stderr());
    assert.match(lastUser(mock.requests[0]), /START-startup/);
    assert.match(lastUser(mock.requests[1]), /again[\s\S]*START-resume/);
  } finally {
    await mock.close();
  }
});

Deno.test("interactive: a first prompt that UserPromptSubmit blocks does not lose SessionStart's context; it goes with the next", async () => {
  const home = await startHome();
  const path = `${home}/.config/deft/config.yaml`;
  await Deno.writeTextFile(
    `${home}/gate.sh`,
    `#!/bin/bash\nif grep -q secret; then echo "no secrets" >&2; exit 2; fi\n`,
  );
  await Deno.writeTextFile(
    path,
    (await Deno.readTextFile(path)) +
      `  UserPromptSubmit:\n    - hooks:\n        - { type: command, command: "bash ${home}/gate.sh" }\n`,
  );
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start([chatText("one"), chatText("two")]);
  try {
    const r = await interactiveOnStdin(repo, mock, "my secret\nhello\nagain\n/exit\n", {
      args: ["--approval", "never"],
      cwd: home,
      env: { HOME: home },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /blocked the prompt: no secrets/);
    assert.deepEqual(await sources(home), ["startup"], "SessionStart ran twice");
    assert.equal(mock.requests.length, 2, r.stderr);
    assert.match(lastUser(mock.requests[0]), /hello[\s\S]*START-startup/);
    assert.doesNotMatch(JSON.stringify(mock.requests[0].body.messages), /my secret/);
    assert.doesNotMatch(lastUser(mock.requests[1]), /START-/);
  } finally {
    await mock.close();
  }
});
