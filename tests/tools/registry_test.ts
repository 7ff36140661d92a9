import assert from "node:assert/strict";
import {
  createTools,
  DEFAULT_TOOL_NAMES,
  placeOf,
  registeredToolNames,
  resolveToolName,
  UnknownToolError,
} from "../../src/tools/registry.ts";
import { InProcessHost } from "../../src/tools/in_process.ts";
import { type Host, StandInTool } from "../../src/tools/stand_in.ts";
import { ok } from "../../src/tools/base.ts";
import { testContext } from "../helpers/tools.ts";

Deno.test("the default set is the five Trae tools and bash's two background handles; ckg is opt-in", () => {
  const names = createTools(testContext()).map((t) => t.name);
  assert.deepEqual(names, [
    "bash",
    "bash_output",
    "kill_shell",
    "str_replace_based_edit_tool",
    "json_edit_tool",
    "sequentialthinking",
    "task_done",
  ]);
  assert.deepEqual([...DEFAULT_TOOL_NAMES], names);
  assert.ok(registeredToolNames().includes("ckg"));
  assert.deepEqual(createTools(testContext(), ["ckg"]).map((t) => t.name), ["ckg"]);
});

Deno.test("tools are built with the provider and render for it", () => {
  const [openai] = createTools(testContext("/tmp", "openai"), ["bash"]);
  const [anthropic] = createTools(testContext("/tmp", "anthropic"), ["bash"]);
  assert.equal(openai.jsonDefinition().parameters.additionalProperties, false);
  assert.equal(anthropic.jsonDefinition().parameters.additionalProperties, undefined);
});

Deno.test("configured names resolve ignoring case and underscores, without duplicates", () => {
  assert.equal(resolveToolName("Sequential_Thinking"), "sequentialthinking");
  const tools = createTools(testContext(), ["TASK_DONE", "task_done"]);
  assert.deepEqual(tools.map((t) => t.name), ["task_done"]);
});

Deno.test("an unknown configured name is an error listing the valid names", () => {
  assert.throws(() => createTools(testContext(), ["bash", "grep"]), (e: unknown) => {
    assert.ok(e instanceof UnknownToolError);
    assert.match(e.message, /Unknown tool 'grep'/);
    assert.match(e.message, /bash, bash_output, kill_shell, str_replace_based_edit_tool/);
    return true;
  });
});

Deno.test("placement: pure tools in process, the rest in the worker; a sandbox moves the file tools", () => {
  const places = (sandbox: "none" | "workspace-write") =>
    Object.fromEntries(registeredToolNames().map((n) => [n, placeOf(n, { sandbox })]));
  assert.deepEqual(places("none"), {
    bash: "worker",
    bash_output: "worker",
    kill_shell: "worker",
    str_replace_based_edit_tool: "worker",
    json_edit_tool: "worker",
    sequentialthinking: "process",
    task_done: "process",
    ckg: "worker",
    web_fetch: "process",
    Task: "process",
  });
  assert.deepEqual(places("workspace-write"), {
    bash: "worker",
    bash_output: "worker",
    kill_shell: "worker",
    str_replace_based_edit_tool: "sandboxed",
    json_edit_tool: "sandboxed",
    sequentialthinking: "process",
    task_done: "process",
    ckg: "sandboxed-cache",
    web_fetch: "process",
    Task: "process",
  });
});

Deno.test("the factory makes one host per place and hands each stand-in's calls to it", async () => {
  const made: [string, string[]][] = [];
  const calls: string[] = [];
  const context = { ...testContext(), settings: { sandbox: "workspace-write" as const } };
  const tools = createTools(context, [...DEFAULT_TOOL_NAMES, "ckg"], (place, names) => {
    made.push([place, names]);
    const host: Host = {
      call: (name) => {
        calls.push(`${place}:${name}`);
        return Promise.resolve(ok("hosted"));
      },
      close: () => Promise.resolve(),
    };
    return host;
  });
  assert.deepEqual(made, [
    ["worker", ["bash", "bash_output", "kill_shell"]],
    ["sandboxed", ["str_replace_based_edit_tool", "json_edit_tool"]],
    ["sandboxed-cache", ["ckg"]],
  ]);
  assert.ok(tools.every((t) => t instanceof StandInTool));
  const byName = new Map(tools.map((t) => [t.name, t as StandInTool]));
  assert.ok(byName.get("task_done")!.host instanceof InProcessHost);
  assert.equal((await byName.get("ckg")!.execute({})).output, "hosted");
  assert.equal((await byName.get("task_done")!.execute({})).output, "Task done.");
  assert.deepEqual(calls, ["sandboxed-cache:ckg"]);
});
