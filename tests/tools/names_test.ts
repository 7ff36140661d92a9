/**
 * The tool names kept apart from the catalog (src/tools/names.ts), for the interactive start's
 * check of `agents.*.tools` before any tool loads, say what the catalog says.
 */
import assert from "node:assert/strict";
import { DEFAULT_TOOL_NAMES, TOOL_NAMES, unknownToolName } from "../../src/tools/names.ts";
import {
  DEFAULT_TOOL_NAMES as CATALOG_DEFAULTS,
  registeredToolNames,
  resolveToolNames,
  UnknownToolError,
} from "../../src/tools/catalog.ts";

Deno.test("tool names: the light list is the catalog's, in its order, defaults included", () => {
  assert.deepEqual(TOOL_NAMES, registeredToolNames());
  assert.deepEqual(DEFAULT_TOOL_NAMES, CATALOG_DEFAULTS);
});

Deno.test("tool names: an unknown configured name is found, with the factory's message", () => {
  const names = ["Bash", "str_replace_based_edit_tool", "taskdone", "no_such_tool", "other"];
  assert.throws(() => resolveToolNames(names), (e) => {
    assert.ok(e instanceof UnknownToolError);
    assert.equal(unknownToolName(names), e.message);
    return true;
  });
  // Case and underscores do not matter, as in the catalog.
  assert.equal(unknownToolName(["BASH", "Sequential_Thinking", "task", "WEB_FETCH"]), undefined);
  assert.doesNotThrow(() => resolveToolNames(["BASH", "Sequential_Thinking", "task", "WEB_FETCH"]));
});
