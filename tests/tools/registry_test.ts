import assert from "node:assert/strict";
import {
  createTools,
  DEFAULT_TOOL_NAMES,
  registeredToolNames,
  resolveToolName,
  UnknownToolError,
} from "../../src/tools/registry.ts";
import { testContext } from "../helpers/tools.ts";

Deno.test("the default set is the five Trae tools; ckg is registered but opt-in", () => {
  const names = createTools(testContext()).map((t) => t.name);
  assert.deepEqual(names, [
    "bash",
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
    assert.match(e.message, /bash, str_replace_based_edit_tool, json_edit_tool/);
    return true;
  });
});
