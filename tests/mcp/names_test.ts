import assert from "node:assert/strict";
import { MAX_TOOL_NAME_LENGTH, mcpToolName } from "../../src/mcp/names.ts";
import { normalizeToolName } from "../../src/tools/executor.ts";
import { registeredToolNames } from "../../src/tools/registry.ts";

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

Deno.test("MCP tool names carry the server under the mcp__ prefix", () => {
  const taken = new Set<string>();
  assert.equal(mcpToolName("github", "create_issue", taken), "mcp__github__create_issue");
  assert.equal(mcpToolName("git hub", "issues.list", taken), "mcp__git_hub__issues_list");
  assert.equal(mcpToolName("db", "", taken), "mcp__db___");
});

Deno.test("MCP tool names never match a built-in tool, even ignoring case and underscores", () => {
  const builtIns = new Set(registeredToolNames().map(normalizeToolName));
  for (const [server, tool] of [["", "bash"], ["task", "done"], ["x", "ckg"]]) {
    const name = mcpToolName(server, tool, new Set());
    assert.ok(!builtIns.has(normalizeToolName(name)), name);
    assert.match(name, VALID);
  }
});

Deno.test("long MCP tool names are cut to 64 characters with a stable hash", () => {
  const long = "very_long_tool_name_".repeat(5);
  const first = mcpToolName("server", long, new Set());
  assert.equal(first.length, MAX_TOOL_NAME_LENGTH);
  assert.match(first, VALID);
  assert.match(first, /^mcp__server__very_long.*_[0-9a-f]{8}$/);
  assert.equal(mcpToolName("server", long, new Set()), first, "same input, same name");
  assert.notEqual(mcpToolName("server", long + "2", new Set()), first);
});

Deno.test("MCP tool names that would collide in the executor's lookup are told apart", () => {
  const taken = new Set<string>();
  const a = mcpToolName("ab", "c", taken);
  const b = mcpToolName("a", "bc", taken); // normalizes to the same "mcpabc"
  const c = mcpToolName("a.b", "c", taken); // sanitizes to the same "mcp__a_b__c"
  const d = mcpToolName("a_b", "c", taken);
  const names = [a, b, c, d];
  assert.equal(new Set(names.map(normalizeToolName)).size, 4, names.join(" "));
  for (const name of names) assert.match(name, VALID);
  assert.equal(a, "mcp__ab__c");
});
