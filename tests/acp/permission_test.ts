/**
 * The ACP asker behind the real approval gate: each option the client picks is the answer the
 * gate understands (allow once runs the call, allow always covers the terminal's `a` scope,
 * reject once refuses it for the model, reject always refuses that scope later unasked), and no
 * answer refuses the call. Another question (repository trust) is not put to the client.
 */
import assert from "node:assert/strict";
import { ApprovalGate } from "../../src/gate/approval.ts";
import type { Tool } from "../../src/tools/base.ts";
import { AcpConsole } from "../../src/acp/console.ts";
import { type PermissionAnswer, PermissionAsker } from "../../src/acp/permission.ts";

const bash = {
  name: "bash",
  effects: (args: Record<string, unknown>) => ({ kind: "command", command: args.command }),
} as unknown as Tool;

function setup(answers: (PermissionAnswer | null)[]) {
  const asked: Record<string, unknown>[] = [];
  const console = new AcpConsole({
    send: () => {},
    effects: (call) => bash.effects(call.arguments as Record<string, unknown>),
    workspace: () => "/nowhere",
    hostFiles: () => false,
    note: () => {},
  });
  const asker = new PermissionAsker({
    console,
    request: (toolCall) => {
      asked.push(toolCall);
      return Promise.resolve(answers.shift() ?? null);
    },
    note: () => {},
  });
  const gate = new ApprovalGate("commands", asker.ask, asker.write, "/nowhere");
  let n = 0;
  const check = (command: string) => {
    const call = { call_id: `c${++n}`, name: "bash", arguments: { command } };
    console.calling(1, [call]);
    return gate.check(bash, { command });
  };
  return { asked, check };
}

Deno.test("acp permission: allow once runs the call; reject once refuses it for the model", async () => {
  const { asked, check } = setup(["allow_once", "reject_once"]);
  assert.equal(await check("touch a"), null);
  assert.match(String(await check("touch b")), /The user denied this command/);
  assert.deepEqual(asked.map((t) => t.toolCallId), ["c1", "c2"]);
  assert.equal(asked[1].kind, "execute");
  assert.match(JSON.stringify(asked[1].content), /\$ touch b/);
});

Deno.test("acp permission: allow always covers the command prefix, as the terminal's `a`", async () => {
  const { asked, check } = setup(["allow_always"]);
  assert.equal(await check("git push origin"), null);
  assert.equal(await check("git push other"), null);
  assert.equal(asked.length, 1);
  // Not another subcommand of the same program.
  assert.match(String(await check("git reset --hard")), /denied/);
  assert.equal(asked.length, 2);
});

Deno.test("acp permission: reject always refuses the prefix later without asking", async () => {
  const { asked, check } = setup(["reject_always"]);
  assert.match(String(await check("rm -rf x")), /denied/);
  assert.match(String(await check("rm y")), /denied/);
  assert.equal(asked.length, 1);
});

Deno.test("acp permission: no answer (cancelled) refuses the call", async () => {
  const { check } = setup([null]);
  assert.match(String(await check("touch z")), /no answer/);
});

Deno.test("acp permission: a question other than an approval is not put to the client", async () => {
  const asked: unknown[] = [];
  const asker = new PermissionAsker({
    console: new AcpConsole({
      send: () => {},
      effects: () => undefined,
      workspace: () => "/",
      hostFiles: () => false,
      note: () => {},
    }),
    request: (t) => {
      asked.push(t);
      return Promise.resolve("allow_once");
    },
    note: () => {},
  });
  assert.equal(await asker.ask("Trust /repo, so its config sets every key? [y/N] "), null);
  assert.equal(asked.length, 0);
});
