/**
 * Issue 52: a hook written for Claude Code's Write/Edit reads `tool_input.file_path` (and
 * `old_string`, `new_string`, `content`); Deft's editor's input carries those names beside its
 * own, and a rewrite in those names comes back in Deft's. Real hooks, in the default sandbox.
 */
import assert from "node:assert/strict";
import { Hooks } from "../../../src/hooks/hooks.ts";
import { tempDir } from "../../helpers/temp.ts";

// Answers deny, with the Claude Code fields it found as the reason.
const ECHO_FIELDS = `python3 -c '
import json, sys
i = json.load(sys.stdin)["tool_input"]
r = "|".join(str(i.get(k)) for k in ["file_path", "old_string", "new_string", "content", "path"])
print(json.dumps({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": r}}))
'`;

// Rewrites the call the way a Claude Code hook would: tool_input back, with file_path changed.
const REWRITE = `python3 -c '
import json, sys
i = json.load(sys.stdin)["tool_input"]
i["file_path"] = i["file_path"] + ".bak"
print(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": i}}))
'`;

Deno.test("editor hooks see Claude Code's field names beside Deft's, and a rewrite in them comes back in Deft's", async () => {
  await using ws = await tempDir("deft-hooks-fields-");
  const hooksOf = (command: string) =>
    new Hooks(
      {
        PreToolUse: [{
          matcher: "str_replace_based_edit_tool",
          hooks: [{ type: "command", command }],
        }],
      },
      undefined,
      { cwd: ws.path, report: (t) => assert.fail(t), tell: () => {} },
    );
  const edit = { command: "str_replace", path: `${ws.path}/a.py`, old_str: "x", new_str: "y" };
  const said = await hooksOf(ECHO_FIELDS).preToolUse("str_replace_based_edit_tool", edit);
  const fields = (reason?: string) => /refused the call: ([\s\S]*)$/.exec(reason ?? "")?.[1];
  assert.equal(fields(said.reason), `${ws.path}/a.py|x|y|None|${ws.path}/a.py`);
  const create = { command: "create", path: `${ws.path}/b.py`, file_text: "print(1)\n" };
  const created = await hooksOf(ECHO_FIELDS).preToolUse("str_replace_based_edit_tool", create);
  assert.equal(fields(created.reason), `${ws.path}/b.py|None|None|print(1)\n|${ws.path}/b.py`);

  const rewritten = await hooksOf(REWRITE).preToolUse("str_replace_based_edit_tool", edit);
  assert.deepEqual(rewritten.updatedInput, { ...edit, path: `${ws.path}/a.py.bak` });
});
