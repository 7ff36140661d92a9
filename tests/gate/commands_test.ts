/**
 * "Always" for `cd DIR && COMMAND`, the model's most common command shape (issue 52): offered for
 * COMMAND when DIR is within the workspace, and never covering anything else. No process starts.
 */
import assert from "node:assert/strict";
import { ApprovalRules } from "../../src/agent/approval_rules.ts";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { afterCd, commandPrefix } from "../../src/gate/commands.ts";
import { gatedExecutor } from "../../src/gate/pipeline.ts";
import { ok } from "../../src/tools/base.ts";
import { FakeTool } from "../helpers/tools.ts";

const WS = "/home/u/project";

Deno.test("commandPrefix: `cd DIR && cmd` has cmd's prefix when DIR is within the workspace, else none", () => {
  assert.equal(commandPrefix("cd sub && npm test", WS), "npm test");
  assert.equal(commandPrefix("cd sub/deeper&&pytest -x tests", WS), "pytest");
  assert.equal(commandPrefix(`cd ${WS}/pkg && cargo test --all`, WS), "cargo test");
  assert.equal(commandPrefix(`cd ${WS} && make`, WS), "make");
  assert.equal(afterCd("cd . && go test ./...", WS), "go test ./...");
  // No always for a cd out of the workspace, or a line that does more.
  for (
    const command of [
      "cd /outside && npm test",
      `cd ${WS}-other && npm test`,
      "cd .. && npm test",
      "cd sub/../../x && npm test",
      "cd ~ && npm test",
      "cd $HOME && npm test",
      'cd "sub" && npm test',
      "cd - && npm test",
      "cd x && npm test; rm -rf y",
      "cd x && npm test && rm -rf y",
      "cd x && npm test | sh",
      "cd x && npm test\nrm -rf y",
      "cd x && $(rm -rf y)",
      "cd x &&",
      "cd x; npm test",
    ]
  ) {
    assert.equal(commandPrefix(command, WS), undefined, command);
  }
  // Without a workspace an absolute path is not known to be within it.
  assert.equal(commandPrefix(`cd ${WS}/pkg && npm test`), undefined);
});

/** A bash-like tool that says it runs `command`; `ran` collects what ran. */
function shell(ran: string[]) {
  const tool = new FakeTool(
    "bash",
    [{ name: "command", type: "string", description: "c" }],
    (a) => {
      ran.push(String(a.command));
      return ok("ran");
    },
  );
  tool.effects = (args) => ({ kind: "command", command: String(args.command) });
  return tool;
}

function gate(answers: string[], rules?: ApprovalRules) {
  const ran: string[] = [];
  const shown: string[] = [];
  const approval = new ApprovalGate(
    "commands",
    () => Promise.resolve(answers.shift() ?? null),
    (text) => shown.push(text),
    WS,
    false,
    rules,
  );
  const executor = gatedExecutor([shell(ran)], { approval });
  const call = (command: string) =>
    executor.executeToolCall({ name: "bash", call_id: command, arguments: { command } });
  return { call, ran, shown };
}

Deno.test("the gate: [a]lways for `cd sub && npm test` covers npm test in the workspace, nothing else", async () => {
  const { call, ran, shown } = gate(["a"]);
  await call("cd sub && npm test");
  assert.match(shown[0], /\[a\]lways for `npm test` commands/);
  await call(`cd ${WS}/web && npm test -- --watch`);
  await call("npm test");
  assert.equal(shown.length, 1, "asked once");
  // Each of these is asked, with no [a]lways offered.
  assert.equal((await call("cd /outside && npm test")).success, false);
  assert.equal((await call("cd sub && npm test; rm -rf y")).success, false);
  assert.equal(shown.length, 3);
  for (const question of shown.slice(1)) assert.doesNotMatch(question, /\[a\]lways/);
  assert.deepEqual(ran, ["cd sub && npm test", `cd ${WS}/web && npm test -- --watch`, "npm test"]);
});

Deno.test("the gate: a saved `allow $ npm test` rule covers `cd sub && npm test`, not a cd out or more", async () => {
  const rules = new ApprovalRules(
    [{
      action: "allow",
      text: "$ npm test",
      source: "project.yaml",
      origin: "project",
    }] as ConstructorParameters<typeof ApprovalRules>[0],
  );
  const { call, ran, shown } = gate([], rules);
  const covered = await call("cd sub && npm test");
  assert.equal(covered.success, true);
  assert.partialDeepStrictEqual(covered.approval, {
    decided_by: "rule",
    rule: { text: "$ npm test" },
  });
  assert.equal(shown.length, 0);
  assert.equal((await call("cd /outside && npm test")).success, false);
  assert.equal((await call("cd sub && npm test && rm -rf y")).success, false);
  assert.equal(shown.length, 2, "both asked");
  assert.deepEqual(ran, ["cd sub && npm test"]);
});
