import assert from "node:assert/strict";
import { hookEntries, matches } from "../../src/hooks/hooks.ts";
import { importClaudeHooks } from "../../src/hooks/import.ts";

Deno.test("matchers: whole tool names, alternatives, every tool when empty or *", () => {
  assert.equal(matches("bash", "bash"), true);
  assert.equal(matches("bash", "bash_extra"), false, "a matcher matches the whole name");
  assert.equal(matches("mcp__fx__.*", "mcp__fx__echo"), true);
  assert.equal(matches("mcp__fx__.*", "bash"), false);
  assert.equal(matches("bash|str_replace_based_edit_tool", "str_replace_based_edit_tool"), true);
  assert.equal(matches(undefined, "anything"), true);
  assert.equal(matches("*", "anything"), true);
  assert.equal(matches("", "anything"), true);
});

Deno.test("matchers as Claude Code reads them: plain names are exact, anything else a regex that may match a part", () => {
  // Letters, digits, _, - and | only: a list of exact names.
  assert.equal(matches("Edit|Write", "NotebookEdit"), false);
  assert.equal(matches("Edit|Write", "Write"), true);
  assert.equal(matches("mcp__github", "mcp__github__create_issue"), false);
  assert.equal(matches("startup|resume", "resume"), true);
  // A regular expression selects the names it finds a match in, anchored or not.
  assert.equal(matches("^mcp__github", "mcp__github__create_issue"), true);
  assert.equal(matches("mcp__.*__create", "mcp__github__create_issue"), true);
  assert.equal(matches("^Notebook", "NotebookEdit"), true);
  assert.equal(matches("^bash$", "bash_extra"), false);
  assert.equal(matches("^mcp__github", "bash"), false);
});

Deno.test("import: Claude Code's tools become Deft's; what cannot be mapped is named", () => {
  const out = importClaudeHooks({
    hooks: {
      PreToolUse: [
        { matcher: "Edit|Write|MultiEdit", hooks: [{ type: "command", command: "a" }] },
        { matcher: "WebFetch", hooks: [{ type: "command", command: "b" }] },
        { matcher: "mcp__github__.*", hooks: [{ type: "command", command: "c" }] },
      ],
      PostToolUse: [{
        matcher: "Bash|Grep",
        hooks: [{ type: "prompt", prompt: "x" }, { type: "command", command: "d", timeout: 5 }],
      }],
      Notification: [{ hooks: [{ type: "command", command: "e" }] }],
    },
  });
  assert.deepEqual(out.hooks, {
    PreToolUse: [
      { matcher: "str_replace_based_edit_tool", hooks: [{ type: "command", command: "a" }] },
      { matcher: "mcp__github__.*", hooks: [{ type: "command", command: "c" }] },
    ],
    PostToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: "d", timeout: 5 }] }],
  });
  const unmapped = out.unmapped.join("\n");
  assert.match(unmapped, /WebFetch has no Deft tool/);
  assert.match(unmapped, /Grep has no Deft tool/);
  assert.match(unmapped, /type prompt/);
  assert.match(unmapped, /Notification/);
  assert.match(out.notes.join("\n"), /cannot select its command/);
  assert.equal(hookEntries(out.hooks, "x.yaml").length, 3);
});

Deno.test("import: PreCompact and SessionEnd come over with their matchers (trigger, reason) as written", () => {
  const out = importClaudeHooks({
    hooks: {
      PreCompact: [{ matcher: "manual|auto", hooks: [{ type: "command", command: "p" }] }],
      SessionEnd: [{ matcher: "prompt_input_exit", hooks: [{ type: "command", command: "s" }] }],
    },
  });
  assert.deepEqual(out.hooks, {
    PreCompact: [{ matcher: "manual|auto", hooks: [{ type: "command", command: "p" }] }],
    SessionEnd: [{ matcher: "prompt_input_exit", hooks: [{ type: "command", command: "s" }] }],
  });
  assert.deepEqual(out.unmapped, []);
});
