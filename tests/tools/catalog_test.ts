import assert from "node:assert/strict";
import {
  CATALOG,
  catalogEntry,
  definitionOf,
  effectsOf,
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
    bash_output: "confines-itself",
    kill_shell: "confines-itself",
    str_replace_based_edit_tool: "tool-host",
    json_edit_tool: "tool-host",
    sequentialthinking: "in-process",
    task_done: "in-process",
    ckg: "cache-host",
    web_fetch: "in-process",
    Task: "in-process",
  });
});

Deno.test("catalog: what each call does; nothing for a tool outside it", () => {
  assert.deepEqual(effectsOf("bash", { command: "rm -rf build" }), {
    kind: "command",
    command: "rm -rf build",
    confinesUnasked: true,
  });
  assert.equal(effectsOf("bash", { restart: true, command: "rm x" })?.kind, "other");
  const create = effectsOf("STR_REPLACE_BASED_EDIT_TOOL", {
    command: "create",
    path: "/w/a.txt",
    file_text: "hi\n",
  });
  assert.equal(create?.kind, "edit");
  if (create?.kind === "edit") {
    assert.equal(create.path, "/w/a.txt");
    assert.equal(create.after?.(null), "hi\n");
  }
  const replace = effectsOf("str_replace_based_edit_tool", {
    command: "str_replace",
    path: "/w/a.txt",
    old_str: "b",
    new_str: "c",
  });
  if (replace?.kind !== "edit") throw new Error("str_replace is an edit");
  assert.equal(replace.after?.("abc"), "acc");
  assert.equal(replace.after?.("bb"), undefined, "not unique: the editor refuses, no preview");
  assert.equal(replace.after?.(null), undefined, "no such file");
  const undo = effectsOf("str_replace_based_edit_tool", { command: "undo_edit", path: "/w/a" });
  assert.equal(undo?.kind === "edit" && undo.reverts, true);
  assert.equal(
    effectsOf("str_replace_based_edit_tool", { command: "view", path: "/w" })?.kind,
    "read",
  );
  assert.equal(
    effectsOf("json_edit_tool", { operation: "view", file_path: "/w/a.json" })?.kind,
    "read",
  );
  const set = effectsOf("json_edit_tool", {
    operation: "set",
    file_path: "/w/a.json",
    json_path: "$.a",
    value: 1,
  });
  assert.equal(set?.kind === "edit" && set.path, "/w/a.json");
  for (const name of ["sequentialthinking", "task_done", "ckg"]) {
    assert.equal(effectsOf(name, {})?.kind, "read", name);
  }
  assert.equal(effectsOf("mcp__files__write", { path: "/w/a" }), undefined);
});

Deno.test("catalog: only the editor's edits can be undone, only task_done ends the run", () => {
  const undoable = CATALOG.filter((e) => e.undo).map((e) => e.definition.name);
  assert.deepEqual(undoable, ["str_replace_based_edit_tool"]);
  assert.deepEqual(catalogEntry("str_replace_based_edit_tool")?.undo?.("/w/a"), {
    command: "undo_edit",
    path: "/w/a",
  });
  const ending = CATALOG.filter((e) => e.endsRun).map((e) => e.definition.name);
  assert.deepEqual(ending, ["task_done"]);
  assert.equal(catalogEntry("TASK_DONE")?.endsRun, true);
});
