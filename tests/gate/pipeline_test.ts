/**
 * The gate pipeline: the one way a call reaches a tool. Read on the source: no executor is built
 * anywhere but by `gatedExecutor` (and `deft tool`'s, the user's own single call); and its
 * steps in order on calls a rule decides.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { ApprovalGate } from "../../src/gate/approval.ts";
import { gatedExecutor } from "../../src/gate/pipeline.ts";
import { ApprovalRules } from "../../src/agent/approval_rules.ts";
import { ok } from "../../src/tools/base.ts";
import { FakeTool } from "../helpers/tools.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Every TypeScript file under `dir`, relative to the repository root. */
function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...sources(path));
    else if (entry.name.endsWith(".ts")) found.push(relative(ROOT, join(ROOT, path)));
  }
  return found;
}

Deno.test("no executor is built outside the gate pipeline (deft tool's single call aside)", () => {
  // Code, not the doc comments' examples.
  const code = (path: string) =>
    Deno.readTextFileSync(join(ROOT, path)).split("\n").filter((l) => !/^\s*(\*|\/\/)/.test(l));
  const building = sources("src").filter((path) =>
    code(path).some((line) => /new ToolExecutor\s*\(/.test(line))
  );
  assert.deepEqual(building.sort(), ["src/cli/tool.ts", "src/gate/pipeline.ts"]);
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

Deno.test("the pipeline in mode never where nobody can be asked: a deny rule and an ask rule refuse, the rest runs", async () => {
  const ran: string[] = [];
  const rules = new ApprovalRules(
    [
      { action: "deny", text: "$ rm", source: "policy.yaml", origin: "file" },
      { action: "ask", text: "$ git push", source: "policy.yaml", origin: "file" },
    ] as ConstructorParameters<typeof ApprovalRules>[0],
  );
  const nobody = () => Promise.resolve(null);
  const approval = new ApprovalGate("never", nobody, () => {}, "/w", false, rules, "deft run");
  const executor = gatedExecutor([shell(ran)], { approval });
  const call = (command: string) =>
    executor.executeToolCall({ name: "bash", call_id: command, arguments: { command } });
  const pushed = await call("git push origin main");
  assert.match(
    pushed.error!,
    /rule `ask \$ git push` \(set in policy\.yaml\).*nobody can be asked/s,
  );
  assert.partialDeepStrictEqual(pushed.approval, {
    decision: "deny",
    decided_by: "rule",
    nobody_to_ask: true,
    rule: { text: "$ git push", source: "policy.yaml" },
  });
  const removed = await call("rm -rf x");
  assert.match(removed.error!, /A deny rule \(`\$ rm`/);
  assert.equal(removed.approval?.nobody_to_ask, undefined);
  const listed = await call("touch x");
  assert.equal(listed.success, true);
  assert.deepEqual(ran, ["touch x"]);
});

Deno.test("the pipeline on a call the user typed: not asked in mode all, recorded as theirs; a deny rule still refuses, and a line a deny rule may hide in is asked", async () => {
  const ran: string[] = [];
  const asked: string[] = [];
  const rules = new ApprovalRules(
    [{
      action: "deny",
      text: "$ rm",
      source: "policy.yaml",
      origin: "file",
    }] as ConstructorParameters<
      typeof ApprovalRules
    >[0],
  );
  const approval = new ApprovalGate(
    "all",
    () => Promise.resolve("n"),
    (text) => asked.push(text),
    "/w",
    false,
    rules,
  );
  const executor = gatedExecutor([shell(ran)], { approval });
  const typed = (command: string) =>
    executor.executeToolCall({
      name: "bash",
      call_id: command,
      arguments: { command },
      by: "user",
    });
  const touched = await typed("touch x");
  assert.equal(touched.success, true);
  assert.deepEqual(touched.approval, {
    decision: "allow",
    decided_by: "user",
    mode: "all",
    asked: false,
    typed: true,
  });
  assert.deepEqual(asked, [], "typing it was the yes");
  const removed = await typed("rm -rf x");
  assert.match(removed.error!, /A deny rule \(`\$ rm`/);
  // `eval` may run rm: the rule cannot tell, so the user is asked (and said no).
  const hidden = await typed('eval "$X"');
  assert.equal(hidden.success, false);
  assert.equal(asked.length, 1);
  // The model's own call in mode all is asked as ever.
  const model = await executor.executeToolCall({
    name: "bash",
    call_id: "m",
    arguments: { command: "touch y" },
  });
  assert.equal(model.success, false);
  assert.equal(asked.length, 2);
  assert.deepEqual(ran, ["touch x"]);
});
