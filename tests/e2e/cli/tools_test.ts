import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";

Deno.test("deft tools lists every tool with a one-line summary", async () => {
  const run = await runDeft(["tools"]);
  assert.equal(run.code, 0, run.stderr);
  const names = run.stdout.trim().split("\n").map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(names, [
    "bash",
    "bash_output",
    "kill_shell",
    "str_replace_based_edit_tool",
    "json_edit_tool",
    "sequentialthinking",
    "task_done",
    "ckg",
    "web_fetch",
    "Task",
  ]);
  assert.match(run.stdout, /ckg .*\(opt-in\)/);
  assert.match(run.stdout, /web_fetch .*\(opt-in\)/);
  assert.match(run.stdout, /Task .*\(opt-in\)/);
});

Deno.test("deft tools --json renders definitions for the chosen provider", async () => {
  const openai = JSON.parse((await runDeft(["tools", "--json", "--provider", "openai"])).stdout);
  const anthropic = JSON.parse(
    (await runDeft(["tools", "--json", "--provider", "anthropic"])).stdout,
  );
  const bashOpenai = openai.find((d: { name: string }) => d.name === "bash");
  const bashAnthropic = anthropic.find((d: { name: string }) => d.name === "bash");
  assert.deepEqual(bashOpenai.parameters.required, [
    "command",
    "restart",
    "timeout",
    "run_in_background",
  ]);
  assert.equal(bashOpenai.parameters.additionalProperties, false);
  assert.deepEqual(bashAnthropic.parameters.required, []);
  assert.equal(bashAnthropic.strict, undefined);
});

Deno.test("deft tools refuses an unknown provider with exit 2", async () => {
  const run = await runDeft(["tools", "--provider", "skynet"]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /unknown provider 'skynet'\. Known: openai, anthropic/);
});
