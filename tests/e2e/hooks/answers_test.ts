/**
 * Hook answers read as Claude Code's hooks reference has them, end to end against the mock
 * model: matchers (plain names exact, anything else an unanchored regular expression),
 * `systemMessage` shown to the user, a PreToolUse `allow` reason for the user and not the model,
 * and an exit 2 where the event cannot block (SessionStart) shown to the user, nothing blocked.
 */
import assert from "node:assert/strict";
import { runMocked, trustedHome } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM, type MockReply } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";

async function homeWith(hooksYaml: string, scripts: Record<string, string> = {}) {
  const home = await trustedHome("deft-hooks-answers-");
  for (const [name, body] of Object.entries(scripts)) {
    await Deno.writeTextFile(`${home}/${name}`, body);
  }
  const path = `${home}/.config/deft/config.yaml`;
  const yaml = hooksYaml.replaceAll("$HOME_DIR", home);
  await Deno.writeTextFile(path, `${await Deno.readTextFile(path)}hooks:\n${yaml}\n`);
  return home;
}

async function run(home: string, replies: MockReply[]) {
  const repo = await makeBuggyRepo();
  const mock = MockLLM.start(replies);
  try {
    const r = await runMocked(mock, "do it", repo, {
      cwd: home,
      env: { HOME: home },
      extra: ["--approval", "never"],
    });
    return { r, mock, repo };
  } finally {
    await mock.close();
  }
}

Deno.test("matchers: a regular expression selects the tools it finds a match in (^ba selects bash); a plain name only itself", async () => {
  const deny = `#!/bin/bash\ncat >/dev/null\necho "no shell here" >&2\nexit 2\n`;
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: "^ba"\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/deny.sh" }\n` +
      `    - matcher: "task"\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/deny.sh" }`,
    { "deny.sh": deny },
  );
  const { r, mock, repo } = await run(home, [
    chatToolCalls([["bash", { command: "touch ran.txt" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  await assert.rejects(Deno.stat(`${repo}/ran.txt`), "the ^ba hook did not select bash");
  assert.match(JSON.stringify(mock.requests[1].body.messages), /no shell here/);
  // `task` is a plain name: it selects the tool `task`, not `task_done`, so the run ends.
  assert.equal(r.code, 0, r.stderr);
  assert.equal(mock.requests.length, 2);
});

Deno.test("systemMessage and an allow's reason reach the user, not the model; SessionStart's exit 2 is shown, nothing blocked", async () => {
  const allow = `#!/bin/bash
cat >/dev/null
echo '{"systemMessage":"audit log is on","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"read-only command"}}'
`;
  const post = `#!/bin/bash\ncat >/dev/null\necho '{"systemMessage":"formatted 1 file"}'\n`;
  const start = `#!/bin/bash\ncat >/dev/null\necho "vault is locked" >&2\nexit 2\n`;
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/allow.sh" }\n` +
      `  PostToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/post.sh" }\n` +
      `  SessionStart:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/start.sh" }`,
    { "allow.sh": allow, "post.sh": post, "start.sh": start },
  );
  const { r, mock, repo } = await run(home, [
    chatToolCalls([["bash", { command: "touch ran.txt" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await Deno.stat(`${repo}/ran.txt`), "the allowed call did not run");
  assert.match(r.stderr, /PreToolUse hook .*allow\.sh.*: audit log is on/);
  assert.match(r.stderr, /PreToolUse hook .*allow\.sh.* said allow for bash: read-only command/);
  assert.match(r.stderr, /PostToolUse hook .*post\.sh.*: formatted 1 file/);
  assert.match(r.stderr, /SessionStart hook .*start\.sh.* exited with status 2: vault is locked/);
  const sent = JSON.stringify(mock.requests.map((q) => q.body.messages));
  assert.doesNotMatch(sent, /audit log is on|formatted 1 file|read-only command|vault is locked/);
  assert.equal(mock.requests.length, 2, "SessionStart's exit 2 blocked the prompt");
});

Deno.test("the same command selected by two groups runs once per call, as in Claude Code", async () => {
  const record = `#!/bin/bash\ncat >/dev/null\necho "$1" >> "$HOME/ran.log"\n`;
  const home = await homeWith(
    `  PreToolUse:\n    - matcher: bash\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh same", sandbox: none }\n` +
      `    - matcher: "^ba"\n      hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh same", sandbox: none }\n` +
      `        - { type: command, command: "bash $HOME_DIR/record.sh other", sandbox: none }`,
    { "record.sh": record },
  );
  const { r } = await run(home, [
    chatToolCalls([["bash", { command: "true" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const ran = (await Deno.readTextFile(`${home}/ran.log`)).trim().split("\n").sort();
  assert.deepEqual(ran, ["other", "same"]);
});

Deno.test("PreToolUse and PostToolUse are told the call's tool_use_id, the same for both", async () => {
  const record = `#!/bin/bash\ncat >> "$HOME/$1.jsonl"\necho >> "$HOME/$1.jsonl"\n`;
  const home = await homeWith(
    `  PreToolUse:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh pre", sandbox: none }\n` +
      `  PostToolUse:\n    - hooks:\n        - { type: command, command: "bash $HOME_DIR/record.sh post", sandbox: none }`,
    { "record.sh": record },
  );
  const { r, mock } = await run(home, [
    chatToolCalls([["bash", { command: "true" }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  const read = async (name: string) =>
    (await Deno.readTextFile(`${home}/${name}.jsonl`)).split("\n").filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  const [pre, post] = [await read("pre"), await read("post")];
  const toolMessage = mock.requests[1].body.messages.find((m: { role: string }) =>
    m.role === "tool"
  ) as { tool_call_id: string };
  assert.ok(toolMessage?.tool_call_id, "no tool message in the second request");
  assert.equal(pre[0].tool_use_id, toolMessage.tool_call_id);
  assert.equal(post[0].tool_use_id, toolMessage.tool_call_id);
});
