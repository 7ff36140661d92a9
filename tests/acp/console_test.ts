/**
 * The ACP console's mapping: a call's kind, title and locations from its description in the
 * catalog, the prompt's content as the task text (text, resource links, embedded text; anything
 * else refused), thoughts as the plan, and secrets masked in streamed text.
 */
import assert from "node:assert/strict";
import { AcpConsole, type Update } from "../../src/acp/console.ts";
import { promptText } from "../../src/acp/server.ts";
import { describeCall, effectsOf } from "../../src/tools/catalog.ts";

Deno.test("acp console: tool kinds come from the catalog's descriptions", () => {
  const kind = (name: string, args: Record<string, unknown>) =>
    describeCall(name, args, effectsOf(name, args)).kind;
  assert.equal(kind("bash", { command: "ls" }), "execute");
  assert.equal(kind("str_replace_based_edit_tool", { command: "view", path: "/a" }), "read");
  assert.equal(
    kind("str_replace_based_edit_tool", {
      command: "str_replace",
      path: "/a",
      old_str: "x",
      new_str: "y",
    }),
    "edit",
  );
  assert.equal(kind("sequentialthinking", { thought: "t" }), "think");
  assert.equal(kind("ckg", { command: "search_function", identifier: "f" }), "search");
  assert.equal(describeCall("mcp_tool", {}, undefined).kind, "other");
});

Deno.test("acp console: a call's title and locations come from its description", () => {
  const sent: Update[] = [];
  const console = new AcpConsole({
    send: (u) => sent.push(u),
    effects: (call) => effectsOf(call.name, call.arguments as Record<string, unknown>),
    workspace: () => "/w",
    hostFiles: () => false,
    note: () => {},
  });
  console.calling(1, [
    {
      call_id: "v",
      name: "str_replace_based_edit_tool",
      arguments: { command: "view", path: "src/a.py", view_range: [40, 60] },
    },
    {
      call_id: "j",
      name: "json_edit_tool",
      arguments: { operation: "set", file_path: "/w/p.json", json_path: "$.version", value: 2 },
    },
    { call_id: "b", name: "bash", arguments: { command: "make\n  test" } },
  ]);
  assert.deepEqual(
    sent.map((u) => [u.title, u.kind, u.locations]),
    [
      // The view's file, resolved in the workspace, at the first line it shows.
      ["view src/a.py", "read", [{ path: "/w/src/a.py", line: 40 }]],
      ["set /w/p.json $.version", "edit", [{ path: "/w/p.json" }]],
      ["$ make test", "execute", []],
    ],
  );
});

Deno.test("acp console: the prompt's text, links and embedded text make the task", () => {
  const text = promptText([
    { type: "text", text: "explain" },
    { type: "resource_link", name: "a.ts", uri: "file:///w/a.ts" },
    { type: "resource", resource: { uri: "file:///w/b.ts", text: "let b = 1;" } },
  ]);
  assert.equal(
    text,
    'explain\n[a.ts](file:///w/a.ts)\n<context uri="file:///w/b.ts">\nlet b = 1;\n</context>',
  );
  assert.throws(
    () => promptText([{ type: "image", mimeType: "image/png", data: "" }]),
    /Deft takes text, resource links and embedded text resources, not image/,
  );
});

Deno.test("acp console: thoughts become the plan; results become updates with their status", () => {
  const sent: Update[] = [];
  const console = new AcpConsole({
    send: (u) => sent.push(u),
    effects: (call) => effectsOf(call.name, call.arguments as Record<string, unknown>),
    workspace: () => "/w",
    hostFiles: () => false,
    note: () => {},
  });
  const call = {
    call_id: "t1",
    name: "sequentialthinking",
    // The tool's own argument names (its definition's): `next_thought_needed`, not camelCase.
    arguments: {
      thought: "first look at the tests",
      next_thought_needed: true,
      thought_number: 1,
      total_thoughts: 3,
    },
  };
  console.calling(1, [call]);
  console.step(1, [call], [{
    name: call.name,
    call_id: "t1",
    success: true,
    output: "ok",
    error: null,
    error_code: 0,
  }], "");
  assert.deepEqual(sent.map((u) => u.sessionUpdate), ["tool_call", "tool_call_update", "plan"]);
  assert.equal(sent[0].kind, "think");
  assert.deepEqual(sent[2].entries, [
    { content: "first look at the tests", priority: "medium", status: "in_progress" },
  ]);
});

Deno.test("acp console: secrets are masked in streamed text", () => {
  const sent: Update[] = [];
  const console = new AcpConsole({
    send: (u) => sent.push(u),
    effects: (call) => effectsOf(call.name, call.arguments as Record<string, unknown>),
    workspace: () => "/w",
    hostFiles: () => false,
    note: () => {},
  });
  const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
  console.text(`the key is ${key} — keep it safe`);
  const shown = JSON.stringify(sent);
  assert.ok(!shown.includes(key), `the key reached the client: ${shown}`);
  assert.match(shown, /the key is \*\*\*/);
});
