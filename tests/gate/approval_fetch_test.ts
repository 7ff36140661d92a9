/**
 * Promises of the approval question for a fetch (web_fetch), each with the test that guards it:
 * - "always" covers the host of that URL only, saved as the rule `fetch HOST` in this project,
 *   never the whole tool: "always for a fetch remembers and saves its host, not the tool"
 * No process is started: the tools' host is a fake that runs nothing.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { ApprovalRules } from "../../src/agent/approval_rules.ts";
import { projectRules } from "../../src/config/approval_rules.ts";
import type { ToolExecResult } from "../../src/tools/base.ts";
import { ToolExecutor } from "../../src/tools/executor.ts";
import { type Host, type StandInEntry, StandInTool } from "../../src/tools/stand_in.ts";
import { tempDir } from "../helpers/temp.ts";

const context = { provider: "openai" as const, workspace: "/nonexistent-workspace", settings: {} };

const host: Host = {
  call: (): Promise<ToolExecResult> =>
    Promise.resolve({ output: "page", error: null, error_code: 0 }),
  close: () => Promise.resolve(),
};

const WEB_FETCH: StandInEntry = {
  definition: {
    name: "web_fetch",
    description: "Fetches a page.",
    parameters: [{ name: "url", type: "string", description: "The URL.", required: true }],
  },
  effects: (args) => ({ kind: "fetch", host: new URL(String(args.url)).hostname }),
};

Deno.test("always for a fetch remembers and saves its host, not the tool", async () => {
  await using config = await tempDir();
  const saved = Deno.env.get("XDG_CONFIG_HOME");
  Deno.env.set("XDG_CONFIG_HOME", config.path);
  try {
    const asked: string[] = [];
    const answers = ["a p", "n not that one"];
    const rules = new ApprovalRules([], "/work/project");
    const gate = new ApprovalGate(
      "commands",
      () => Promise.resolve(answers.shift() ?? null),
      (shown) => {
        if (shown.includes("Approve this")) asked.push(shown);
      },
      "/work/project",
      false,
      rules,
    );
    const executor = new ToolExecutor([new StandInTool(WEB_FETCH, context, host)], gate);
    let id = 0;
    const fetch = (url: string) =>
      executor.executeToolCall({ name: "web_fetch", call_id: String(++id), arguments: { url } });

    const first = await fetch("https://docs.example.com/a");
    assert.equal(first.success, true);
    assert.match(asked[0], /\[a\]lways for fetches from docs\.example\.com/);
    assert.deepEqual(
      (await projectRules("/work/project")).map((r) => r.text),
      ["fetch docs.example.com"],
    );
    assert.deepEqual(rules.list().map((r) => `${r.action} ${r.text}`), [
      "allow fetch docs.example.com",
    ]);

    // The same host again: let through unasked.
    const again = await fetch("https://docs.example.com/b");
    assert.equal(again.success, true);
    assert.equal(asked.length, 1);

    // Another host is asked about, and refused here.
    const other = await fetch("https://evil.example.net/");
    assert.equal(other.success, false);
    assert.equal(asked.length, 2);
    assert.match(other.error ?? "", /denied this fetch: Not that one/i);
  } finally {
    if (saved === undefined) Deno.env.delete("XDG_CONFIG_HOME");
    else Deno.env.set("XDG_CONFIG_HOME", saved);
  }
});
