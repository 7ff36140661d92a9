import assert from "node:assert/strict";
import {
  approvalClassOf,
  CATALOG,
  definitionOf,
  entryOf,
  registeredToolNames,
  UnknownToolError,
} from "../../src/tools/catalog.ts";
import { testContext } from "../helpers/tools.ts";

Deno.test("catalog: each loader builds the tool its definition describes", async () => {
  for (const entry of CATALOG) {
    const Implementation = await entry.load();
    const tool = new Implementation(testContext());
    try {
      assert.equal(tool.name, entry.definition.name);
      assert.equal(tool.description, entry.definition.description);
      assert.deepEqual(tool.parameters, entry.definition.parameters);
    } finally {
      await tool.close();
    }
  }
});

Deno.test("catalog: names are unique, and entries are found by their exact name", () => {
  const names = registeredToolNames();
  assert.equal(new Set(names).size, names.length);
  assert.equal(definitionOf("ckg").name, "ckg");
  assert.throws(() => entryOf("grep"), UnknownToolError);
});

Deno.test("catalog: where each tool runs", () => {
  const runs = Object.fromEntries(CATALOG.map((e) => [e.definition.name, e.runs]));
  assert.deepEqual(runs, {
    bash: "confines-itself",
    str_replace_based_edit_tool: "tool-host",
    json_edit_tool: "tool-host",
    sequentialthinking: "in-process",
    task_done: "in-process",
    ckg: "cache-host",
  });
});

Deno.test("catalog: the approval class of each tool; none for a tool outside it", () => {
  assert.equal(approvalClassOf("bash"), "runs-commands");
  assert.equal(approvalClassOf("str_replace_based_edit_tool"), "edits-files");
  assert.equal(approvalClassOf("JSON_EDIT_TOOL"), "edits-files");
  for (const name of ["sequentialthinking", "task_done", "ckg"]) {
    assert.equal(approvalClassOf(name), "read-only", name);
  }
  assert.equal(approvalClassOf("mcp__files__write"), undefined);
});
