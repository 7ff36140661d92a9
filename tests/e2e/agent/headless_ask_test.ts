/**
 * Where nobody can be asked, an ask fails closed: in `deft run` (and `-p`), `deft serve` and
 * `deft mcp`, a call an ask rule or a PreToolUse hook's `ask` is about is refused, the rule or
 * hook named to the model, on the console, in `--json` and in the trajectory, and `deft run`
 * exits 1. `--approve-asks` lets such calls run instead.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { runDeft, runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { deftMcpCommand } from "../../helpers/deft_mcp.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { tempDir } from "../../helpers/temp.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

/** A HOME whose user config says `yaml` (appended), and its config file's path. */
async function homeWith(yaml: string): Promise<{ home: string; config: string }> {
  const home = await trustedHomeWith("deft-headless-ask-", () => yaml);
  return { home, config: `${home}/.config/deft/config.yaml` };
}

const ASK_TOUCH = 'approvals:\n  ask: ["$ touch"]\n';

/** `deft run --json -t FILE` in a fresh workspace; the model runs `touch made-by-ask`. */
async function runTouch(home: string, extra: string[] = []) {
  await using dir = await tempDir("deft-headless-ws-");
  const traj = `${home}/t-${crypto.randomUUID()}.json`;
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "touch made-by-ask" }]]),
    chatText("Done."),
  ]);
  try {
    const r = await runMocked(mock, "make the file", dir.path, {
      cwd: home,
      env: { HOME: home, XDG_STATE_HOME: `${home}/state` },
      extra: ["--json", "-t", traj, ...extra],
    });
    const made = await Deno.stat(`${dir.path}/made-by-ask`).then(() => true, () => false);
    const trajectory = JSON.parse(await Deno.readTextFile(traj));
    const told = JSON.stringify(mock.requests[1]?.body.messages ?? []);
    return { r, made, trajectory, told };
  } finally {
    await mock.close();
  }
}

Deno.test("deft run: an ask rule refuses the command where nobody can be asked; exit code, --json and the trajectory name the rule", async () => {
  const { home, config } = await homeWith(ASK_TOUCH);
  const { r, made, trajectory, told } = await runTouch(home);
  assert.equal(made, false, "the command an ask rule guards ran unasked");
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout);
  assert.equal(summary.exit_code, 1);
  const expected = {
    decision: "deny",
    decided_by: "rule",
    nobody_to_ask: true,
    rule: { text: "$ touch", source: config },
  };
  const [approval] = summary.approvals;
  assert.partialDeepStrictEqual(approval, { tool: "bash", ...expected });
  assert.partialDeepStrictEqual(trajectory.agent_steps[0].tool_results[0].approval, expected);
  // The model is told which rule refused it and that nobody could be asked.
  assert.match(told, /approval rule `ask \$ touch`/, told);
  assert.match(told, /nobody can be asked here \(deft run runs unattended\)/, told);
  // So is the user, with the way out.
  assert.match(r.stderr, /refused: a bash call in step 1: the rule `ask \$ touch`/, r.stderr);
  assert.match(r.stderr, /--approve-asks/);
});

Deno.test("deft run --approve-asks: the user said to run what an ask rule is about; it runs", async () => {
  const { home } = await homeWith(ASK_TOUCH);
  const { r, made, trajectory } = await runTouch(home, ["--approve-asks"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(made, true, r.stderr);
  assert.equal(trajectory.agent_steps[0].tool_results[0].approval.decision, "allow");
});

Deno.test("deft -p: a PreToolUse hook's ask refuses the call, naming the hook", async () => {
  const { home } = await homeWith(
    `hooks:\n  PreToolUse:\n    - matcher: "bash"\n      hooks:\n` +
      `        - { type: command, command: "bash ${"$"}HOME/ask.sh" }\n`,
  );
  await Deno.writeTextFile(
    `${home}/ask.sh`,
    `#!/bin/bash\ncat >/dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse",` +
      `"permissionDecision":"ask","permissionDecisionReason":"check with me"}}'\n`,
  );
  await using dir = await tempDir("deft-headless-hook-");
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "touch made-by-ask" }]]),
    chatText("Done."),
  ]);
  try {
    const r = await runDeft([
      "-p",
      "make the file",
      "-C",
      dir.path,
      ...mockModelArgs(mock, "mock-model"),
      "--output-format",
      "json",
    ], { cwd: home, env: { HOME: home, XDG_STATE_HOME: `${home}/state` } });
    await assert.rejects(Deno.stat(`${dir.path}/made-by-ask`), "the hook's ask ran unasked");
    assert.equal(r.code, 1, r.stderr);
    const [approval] = JSON.parse(r.stdout).approvals;
    assert.equal(approval.decided_by, "hook");
    assert.equal(approval.nobody_to_ask, true);
    assert.match(approval.hook.name, /ask\.sh/);
    assert.match(
      JSON.stringify(mock.requests[1].body.messages),
      /PreToolUse hook 'bash .*ask\.sh' .*nobody can be asked/,
    );
  } finally {
    await mock.close();
  }
});

Deno.test("deft serve: an ask rule refuses the call (and a deny rule), unless --approve-asks", async () => {
  const { home } = await homeWith('approvals:\n  ask: ["$ touch"]\n  deny: ["$ mkdir"]\n');
  await using dir = await tempDir("deft-headless-serve-");
  const calls = [
    { id: 1, name: "bash", arguments: { command: "touch made-by-ask" } },
    { id: 2, name: "bash", arguments: { command: "mkdir denied" } },
  ].map((c) => JSON.stringify(c) + "\n").join("");
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  const r = await runDeft(["serve", "-w", dir.path], { stdin: calls, cwd: home, env });
  assert.equal(r.code, 0, r.stderr);
  const [asked, denied] = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(asked.success, false);
  assert.match(asked.error, /rule `ask \$ touch`.*nobody can be asked here \(deft serve/s);
  assert.equal(denied.success, false);
  assert.match(denied.error, /deny rule \(`\$ mkdir`/);
  await assert.rejects(Deno.stat(`${dir.path}/made-by-ask`));
  await assert.rejects(Deno.stat(`${dir.path}/denied`));
  const again = await runDeft(["serve", "-w", dir.path, "--approve-asks"], {
    stdin: calls,
    cwd: home,
    env,
  });
  assert.equal(JSON.parse(again.stdout.split("\n")[0]).success, true, again.stdout);
  await Deno.stat(`${dir.path}/made-by-ask`);
  await assert.rejects(Deno.stat(`${dir.path}/denied`), "--approve-asks lifted a deny rule");
});

Deno.test({
  name: "deft mcp: an MCP client's call an ask rule is about is refused, naming the rule",
  // The SDK's stdio transport drives the child through Node's child_process.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { home } = await homeWith(ASK_TOUCH);
    await using dir = await tempDir("deft-headless-mcp-");
    const client = new Client({ name: "deft-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        ...deftMcpCommand(["-w", dir.path]),
        cwd: home,
        env: { ...Deno.env.toObject(), NO_COLOR: "1", HOME: home, XDG_STATE_HOME: `${home}/s` },
        stderr: "pipe",
      }),
    );
    try {
      const result = await client.callTool({
        name: "bash",
        arguments: { command: "touch made-by-ask" },
      }) as CallToolResult;
      assert.equal(result.isError, true);
      const text = (result.content[0] as { text: string }).text;
      assert.match(text, /rule `ask \$ touch`.*nobody can be asked here \(deft mcp/s);
      await assert.rejects(Deno.stat(`${dir.path}/made-by-ask`));
    } finally {
      await client.close();
    }
  },
});
