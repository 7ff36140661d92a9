import assert from "node:assert/strict";
import {
  deadlineSeconds,
  DEFAULT_DEADLINE_SECONDS,
  parseDeadlines,
} from "../../../../src/tools/host/deadlines.ts";
import { FILE_TOOL_DEADLINE_SECONDS } from "../../../../src/tools/catalog.ts";
import { runDeft } from "../../../helpers/deft.ts";

Deno.test("--deadline takes SECONDS or TOOL=SECONDS pairs", () => {
  assert.deepEqual(parseDeadlines("30"), { default: 30 });
  assert.deepEqual(parseDeadlines("view=5, json_edit_tool=0.5,default=60"), {
    view: 5,
    json_edit_tool: 0.5,
    default: 60,
  });
  for (const bad of ["x", "a=", "=3", "a=-1", "a=0", "a=1s"]) {
    assert.throws(() => parseDeadlines(bad), /--deadline: .* is not TOOL=SECONDS/);
  }
});

Deno.test("a tool's deadline: its own, else default, else 300 s; bash never below its timeout", () => {
  // The file editors have a short one of their own (issue 28, finding 9); other tools 300 s.
  assert.equal(deadlineSeconds(undefined, "json_edit_tool", {}), FILE_TOOL_DEADLINE_SECONDS);
  assert.equal(deadlineSeconds(undefined, "str_replace_based_edit_tool", {}), 30);
  assert.equal(deadlineSeconds(undefined, "ckg", {}), DEFAULT_DEADLINE_SECONDS);
  assert.equal(deadlineSeconds({ default: 9 }, "json_edit_tool", {}), 9);
  assert.equal(deadlineSeconds({ default: 9, JSON_EDIT_TOOL: 2 }, "json_edit_tool", {}), 2);
  assert.equal(deadlineSeconds({ bash: 5 }, "bash", {}), 180);
  assert.equal(deadlineSeconds({ bash: 5 }, "bash", { timeout: 1000 }), 1060);
  assert.equal(deadlineSeconds({ bash: 5 }, "bash", {}, 30), 90);
  assert.equal(deadlineSeconds({ bash: 500 }, "bash", {}), 500);
});

Deno.test("a bad --deadline is a usage error naming the problem", async () => {
  const unknown = await runDeft(["serve", "--deadline", "view=3"], { stdin: "" });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /'view' is not a tool/);
  const bad = await runDeft(["tool", "task_done", "{}", "--deadline", "soon"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--deadline: 'soon'/);
});
