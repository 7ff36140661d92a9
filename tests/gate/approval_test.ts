/**
 * The approval gate judges a call by what its tool says the call does (the catalog entry's
 * `effects`, an MCP tool's trusted `readOnlyHint`), never by argument names; its verdict reaches
 * the tool beside the arguments. No process is started here: the tools' hosts are fakes.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { preToolUse } from "../../src/gate/hooks.ts";
import type { Hooks } from "../../src/hooks/hooks.ts";
import { McpConnection, type RemoteTool } from "../../src/mcp/client.ts";
import { McpTool } from "../../src/mcp/tool.ts";
import type { CallPlan, ToolExecResult } from "../../src/tools/base.ts";
import { entryOf } from "../../src/tools/catalog.ts";
import { type CallGate, RUN_UNASKED, ToolExecutor } from "../../src/tools/executor.ts";
import { type Host, type StandInEntry, StandInTool } from "../../src/tools/stand_in.ts";

const context = { provider: "openai" as const, workspace: "/nonexistent-workspace", settings: {} };

/** A host that records the calls it would run and runs none. */
class RecordingHost implements Host {
  readonly calls: { name: string; args: Record<string, unknown>; plan?: CallPlan }[] = [];
  call(name: string, args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    this.calls.push({ name, args, plan });
    return Promise.resolve({ output: "ran", error: null, error_code: 0 });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A gate in `mode` whose user answers `answers` in turn (then nothing), and what it showed. */
function gateAnswering(mode: "commands" | "all", answers: string[]) {
  const shown: string[] = [];
  const gate = new ApprovalGate(
    mode,
    () => Promise.resolve(answers.shift() ?? null),
    (text) => shown.push(text),
  );
  return { gate, shown };
}

// A tool registered the way the catalog registers one: it runs a script, named `script`.
const RUN_SCRIPT: StandInEntry = {
  definition: {
    name: "run_script",
    description: "Runs a shell script.",
    parameters: [{ name: "script", type: "string", description: "The script.", required: true }],
  },
  effects: (args) => ({ kind: "command", command: String(args.script) }),
};

Deno.test("a command-running tool whose parameter is `script` is asked about in commands mode", async () => {
  const host = new RecordingHost();
  const tool = new StandInTool(RUN_SCRIPT, context, host);
  const { gate, shown } = gateAnswering("commands", ["n not now"]);
  const executor = new ToolExecutor([tool], gate);
  const result = await executor.executeToolCall({
    name: "run_script",
    call_id: "1",
    arguments: { script: "rm -rf build" },
  });
  assert.equal(result.success, false);
  assert.match(result.error!, /denied this command: not now/);
  assert.equal(shown.length, 1, "asked once");
  assert.match(shown[0], /Approve this command\?\n\$ rm -rf build/);
  assert.deepEqual(host.calls, [], "the refused script never reached the host");
});

Deno.test("a tool whose entry cannot say what a call does is asked about in commands mode", async () => {
  const host = new RecordingHost();
  const future = new StandInTool(
    { definition: { ...RUN_SCRIPT.definition, name: "future_tool" } },
    context,
    host,
  );
  const { gate, shown } = gateAnswering("commands", ["n"]);
  const verdict = await gate.check(future, { script: "anything" });
  assert.match(String(verdict), /denied this tool call/);
  assert.match(shown[0], /Approve this tool call\?\nfuture_tool \{"script":"anything"\}/);
});

Deno.test("the gate's verdict reaches the tool beside the arguments, never inside them", async () => {
  const host = new RecordingHost();
  const tool = new StandInTool(RUN_SCRIPT, context, host);
  const unasked: CallGate = { check: () => Promise.resolve(RUN_UNASKED) };
  const asked: CallGate = { check: () => Promise.resolve(null) };
  for (const [gate, plan] of [[unasked, { unasked: true }], [asked, undefined]] as const) {
    host.calls.length = 0;
    const executor = new ToolExecutor([tool], gate);
    await executor.executeToolCall({
      name: "run_script",
      call_id: "1",
      arguments: { script: "ls" },
    });
    assert.deepEqual(host.calls, [{ name: "run_script", args: { script: "ls" }, plan }]);
  }
});

/** An MCP tool as a server lists it; `trusted`: the server comes from the user's own config. */
function mcpTool(annotations: RemoteTool["annotations"], trusted: boolean): McpTool {
  const connection = new McpConnection("files", { command: "/no/such/server" } as never, {
    workspace: "/nonexistent-workspace",
    annotationsTrusted: trusted,
  });
  const remote = {
    name: "read_text",
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
    annotations,
  } as RemoteTool;
  return new McpTool(context, connection, remote, "mcp__files__read_text");
}

Deno.test("an MCP tool is asked about in commands mode unless the user's own server marks it read-only", async () => {
  const cases: [string, McpTool, boolean][] = [
    ["no annotation", mcpTool(undefined, true), true],
    ["readOnlyHint false", mcpTool({ readOnlyHint: false }, true), true],
    ["readOnlyHint from the user's config", mcpTool({ readOnlyHint: true }, true), false],
    ["readOnlyHint from a repository's config", mcpTool({ readOnlyHint: true }, false), true],
  ];
  for (const [what, tool, asked] of cases) {
    const { gate, shown } = gateAnswering("commands", ["n"]);
    const verdict = await gate.check(tool, { path: "/etc/hostname" });
    if (asked) {
      assert.match(String(verdict), /denied this tool call/, what);
      assert.match(shown[0], /mcp__files__read_text \{"path":"\/etc\/hostname"\}/, what);
    } else {
      assert.equal(verdict, null, what);
      assert.equal(shown.length, 0, what);
    }
  }
});

Deno.test("always for `git push origin main` approves neither `git reset --hard` nor `git clean -fdx`", async () => {
  const host = new RecordingHost();
  const bash = new StandInTool(entryOf("bash"), context, host);
  const { gate, shown } = gateAnswering("commands", ["a", "n", "n", "n", "n", "n"]);
  const run = (command: string) => gate.check(bash, { command });
  assert.equal(await run("git push origin main"), null, "answered always");
  assert.match(shown[0], /\[a\]lways for `git push` commands/);
  assert.equal(await run("git push origin feature"), null, "always covers git push");
  assert.equal(shown.length, 1);
  for (
    const command of [
      "git reset --hard",
      "git clean -fdx",
      // An option before the subcommand hides it from a prefix: asked, and no "always" offered.
      "git -C . push origin main",
      "git --git-dir=.git reset --hard",
    ]
  ) {
    assert.match(String(await run(command)), /denied this command/, command);
  }
  assert.equal(shown.length, 5, "each of them was asked");
  assert.doesNotMatch(shown[3], /\[a\]lways/, "no always for git with an option first");
});

Deno.test("always for a bare `git` covers no git subcommand", async () => {
  const bash = new StandInTool(entryOf("bash"), context, new RecordingHost());
  const { gate, shown } = gateAnswering("commands", ["a", "n"]);
  assert.equal(await gate.check(bash, { command: "git" }), null);
  assert.match(String(await gate.check(bash, { command: "git reset --hard" })), /denied/);
  assert.equal(shown.length, 2);
});

Deno.test("a denial reads as sentences: the user's reason gets its full stop before 'It did not run.'", async () => {
  const deny = async (answer: string) => {
    const { gate } = gateAnswering("commands", [answer]);
    return String(
      await gate.check(new StandInTool(RUN_SCRIPT, context, new RecordingHost()), {
        script: "rm -rf build",
      }),
    );
  };
  assert.match(
    await deny("n use the test script"),
    /^The user denied this command: use the test script\. It did not run\. Do not repeat it/,
  );
  // A reason that already ends a sentence keeps its own mark; none at all, the plain refusal.
  assert.match(await deny("n why?"), /: why\? It did not run\./);
  assert.match(await deny('n say "stop."'), /: say "stop\." It did not run\./);
  assert.match(await deny("n"), /^The user denied this command\. It did not run\./);
});

Deno.test("a PreToolUse hook's refusal reads as the others do: its reason, a full stop, 'It did not run.'", async () => {
  const tool = new StandInTool(RUN_SCRIPT, context, new RecordingHost());
  const refusedBy = async (reason?: string) => {
    const hooks = {
      preToolUse: () => Promise.resolve({ decision: "deny", reason, by: { name: "guard" } }),
    } as unknown as Hooks;
    const step = await preToolUse(hooks, tool, { script: "ls" }, undefined, "commands");
    return "decided" in step ? String(step.decided.verdict) : "not decided";
  };
  assert.equal(
    await refusedBy("PreToolUse hook guard refused the call: use make"),
    "PreToolUse hook guard refused the call: use make. It did not run.",
  );
  assert.equal(await refusedBy(undefined), "A PreToolUse hook refused the call. It did not run.");
});
