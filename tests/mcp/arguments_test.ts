import assert from "node:assert/strict";
import { prepareArguments, topLevelParameters } from "../../src/mcp/arguments.ts";
import { validateArguments } from "../../src/tools/validate.ts";

const SCHEMA = {
  type: "object",
  properties: {
    query: { type: "string", description: "Search text." },
    cursor: { type: ["string", "null"], description: "Required, but may be null." },
    limit: { type: "integer" },
    filter: {
      type: "object",
      properties: {
        kind: { type: "string" },
        owner: { $ref: "#/$defs/person" },
        note: { anyOf: [{ type: "string" }, { type: "null" }] },
      },
      required: ["kind"],
    },
    people: { type: "array", items: { $ref: "#/$defs/person" } },
    shape: {
      anyOf: [
        { type: "object", properties: { radius: { type: "number" }, unit: { type: "string" } } },
        { type: "object", properties: { side: { type: "number" }, unit: { type: "string" } } },
      ],
    },
  },
  required: ["query", "cursor"],
  $defs: {
    person: {
      type: "object",
      properties: { name: { type: "string" }, email: { type: "string" } },
      required: ["name"],
    },
  },
};

Deno.test("the executor sees one untyped parameter per top-level property", () => {
  assert.deepEqual(topLevelParameters(SCHEMA), [
    { name: "query", description: "Search text.", required: true },
    { name: "cursor", description: "Required, but may be null.", required: true },
    { name: "limit", description: "", required: false },
    { name: "filter", description: "", required: false },
    { name: "people", description: "", required: false },
    { name: "shape", description: "", required: false },
  ]);
  assert.deepEqual(topLevelParameters({ type: "object" }), []);
});

Deno.test("validation passes complex values through and still names missing arguments", () => {
  const params = topLevelParameters(SCHEMA);
  const args = {
    query: "x",
    cursor: null,
    filter: { kind: "file", owner: { name: "Ann" }, extra: [1, { deep: true }] },
    shape: { radius: 2 },
  };
  const ok = validateArguments("t", params, args);
  assert.ok(ok.ok);
  assert.deepEqual(ok.args, args);
  const missing = validateArguments("t", params, { cursor: "c" });
  assert.ok(!missing.ok);
  assert.match(missing.error, /missing required argument `query`/);
  const unknown = validateArguments("t", params, { query: "x", qeury: "y" });
  assert.ok(!unknown.ok);
  assert.match(unknown.error, /unknown argument `qeury`/);
});

Deno.test("the nulls strict mode adds to optional properties are dropped, at any depth", () => {
  const args = {
    query: "x",
    cursor: null,
    limit: null,
    filter: { kind: "file", owner: null, note: null },
    people: [{ name: "Ann", email: null }, { name: "Bo", email: "bo@x" }],
    shape: { side: 3, unit: null },
  };
  assert.deepEqual(prepareArguments(SCHEMA, args), {
    query: "x",
    // `cursor` and `note` accept null, so their nulls are values and stay.
    cursor: null,
    filter: { kind: "file", note: null },
    people: [{ name: "Ann" }, { name: "Bo", email: "bo@x" }],
    shape: { side: 3 },
  });
});

Deno.test("keys the schema does not name pass through untouched", () => {
  const open = { type: "object", additionalProperties: true };
  assert.deepEqual(prepareArguments(open, { a: null, b: { c: null } }), {
    a: null,
    b: { c: null },
  });
});
