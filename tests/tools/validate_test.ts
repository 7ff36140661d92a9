import assert from "node:assert/strict";
import { validateArguments } from "../../src/tools/validate.ts";
import type { ToolParameter } from "../../src/tools/base.ts";

const PARAMS: ToolParameter[] = [
  {
    name: "command",
    type: "string",
    description: "c",
    enum: ["view", "create"],
    required: true,
  },
  { name: "line", type: "integer", description: "l" },
  { name: "ratio", type: "number", description: "r" },
  { name: "flag", type: "boolean", description: "f" },
  { name: "range", type: "array", description: "r", items: { type: "integer" } },
  {
    name: "opts",
    type: "object",
    description: "o",
    properties: [{ name: "depth", type: "integer", description: "d", required: true }],
  },
  { name: "value", description: "any" },
];

function error(args: unknown): string {
  const result = validateArguments("t", PARAMS, args);
  assert.equal(result.ok, false, "expected a validation error");
  return (result as { error: string }).error;
}

Deno.test("valid arguments pass through unchanged", () => {
  const args = {
    command: "view",
    line: 3,
    ratio: 0.5,
    flag: false,
    range: [1, -1],
    opts: { depth: 2 },
    value: { any: ["thing"] },
  };
  assert.deepEqual(validateArguments("t", PARAMS, args), { ok: true, args });
});

Deno.test("null for an optional typed parameter means absent; for an any-JSON one it is a value", () => {
  const result = validateArguments("t", PARAMS, { command: "view", line: null, value: null });
  assert.deepEqual(result, { ok: true, args: { command: "view", value: null } });
});

Deno.test("a missing required argument is named with its type", () => {
  assert.match(error({}), /missing required argument `command` \(string\)/);
  assert.match(error({ command: null }), /missing required argument `command`/);
});

Deno.test("wrong types are reported, never coerced", () => {
  assert.match(
    error({ command: "view", line: "3" }),
    /`line` must be an integer, got a string \("3"\)/,
  );
  assert.match(
    error({ command: "view", line: 1.5 }),
    /`line` must be an integer, got the number 1.5/,
  );
  assert.match(error({ command: "view", flag: "true" }), /`flag` must be a boolean/);
  assert.match(error({ command: "view", ratio: "x" }), /`ratio` must be a number/);
  assert.match(error({ command: "view", range: "1,2" }), /`range` must be an array of integers/);
  assert.match(error({ command: "view", range: [1, "2"] }), /`range\[1\]` must be an integer/);
  assert.match(error({ command: "view", opts: [] }), /`opts` must be an object, got an array/);
  assert.match(error({ command: "view", opts: {} }), /missing required argument `opts.depth`/);
});

Deno.test("a value outside the enum lists the allowed values", () => {
  assert.match(
    error({ command: "delete" }),
    /`command` must be one of "view", "create", got "delete"/,
  );
});

Deno.test("unknown arguments are refused, nested ones too", () => {
  assert.match(error({ command: "view", bogus: 1 }), /unknown argument `bogus`/);
  assert.match(error({ command: "view", opts: { depth: 1, x: 2 } }), /unknown argument `opts.x`/);
});

Deno.test("every problem is reported at once, with the parameter list", () => {
  const message = error({ line: "x", bogus: true });
  assert.match(message, /^Invalid arguments for tool 't':/);
  assert.match(message, /unknown argument `bogus`/);
  assert.match(message, /missing required argument `command`/);
  assert.match(message, /`line` must be an integer/);
  assert.match(message, /Its parameters: command: string, line\?: integer/);
});

Deno.test("arguments that are not an object are refused", () => {
  for (const bad of [[], "x", 3, null, true]) {
    assert.match(error(bad), /must be a JSON object/);
  }
});

Deno.test("a tool without parameters says so", () => {
  const result = validateArguments("task_done", [], { x: 1 });
  assert.equal(result.ok, false);
  assert.match((result as { error: string }).error, /It takes no arguments/);
});
