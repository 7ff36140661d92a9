import assert from "node:assert/strict";
import { plainSchema, strictSchema } from "../../src/mcp/strict.ts";

Deno.test("strict rendering requires every property and makes optional ones nullable", () => {
  const schema = strictSchema({
    type: "object",
    properties: {
      path: { type: "string", description: "Where." },
      mode: { type: "string", enum: ["r", "w"] },
      depth: { type: ["integer", "null"] },
      choice: { anyOf: [{ type: "string" }, { type: "number" }] },
    },
    required: ["path"],
  });
  assert.deepEqual(schema, {
    type: "object",
    properties: {
      path: { type: "string", description: "Where." },
      mode: { type: ["string", "null"], enum: ["r", "w", null] },
      depth: { type: ["integer", "null"] },
      choice: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
    },
    required: ["path", "mode", "depth", "choice"],
    additionalProperties: false,
  });
});

Deno.test("strict rendering closes nested objects and array items", () => {
  const schema = strictSchema({
    type: "object",
    properties: {
      edits: {
        type: "array",
        items: {
          type: "object",
          properties: { old: { type: "string" }, new: { type: "string" } },
          required: ["old"],
        },
      },
    },
    required: ["edits"],
  });
  assert.deepEqual(schema?.properties, {
    edits: {
      type: "array",
      items: {
        type: "object",
        properties: { old: { type: "string" }, new: { type: ["string", "null"] } },
        required: ["old", "new"],
        additionalProperties: false,
      },
    },
  });
});

Deno.test("strict rendering keeps $defs, wraps optional $refs and inlines $refs with siblings", () => {
  const schema = strictSchema({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      owner: { $ref: "#/$defs/person" },
      reviewer: { $ref: "#/$defs/person", description: "Who reviews." },
    },
    required: ["reviewer"],
    $defs: {
      person: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    },
  });
  assert.ok(schema);
  assert.equal(schema.$schema, undefined);
  const properties = schema.properties as Record<string, unknown>;
  assert.deepEqual(properties.owner, { anyOf: [{ $ref: "#/$defs/person" }, { type: "null" }] });
  assert.deepEqual(properties.reviewer, {
    type: "object",
    description: "Who reviews.",
    properties: { name: { type: "string" } },
    required: ["name"],
    additionalProperties: false,
  });
  assert.deepEqual(schema.$defs, {
    person: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    },
  });
});

Deno.test("keywords strict mode lacks move into the description; const becomes an enum", () => {
  const schema = strictSchema({
    type: "object",
    properties: {
      name: { type: "string", description: "The name.", minLength: 1, format: "uri" },
      count: { type: "integer", default: 10, minimum: 0 },
      kind: { const: "file" },
      when: { type: "string", format: "date-time", examples: ["2026-01-01T00:00:00Z"] },
    },
    required: ["name", "kind", "when"],
  });
  const properties = schema?.properties as Record<string, unknown>;
  assert.deepEqual(properties.name, {
    type: "string",
    description: "The name. (minLength: 1; format: uri)",
  });
  assert.deepEqual(properties.count, {
    type: ["integer", "null"],
    minimum: 0,
    description: "(default: 10)",
  });
  assert.deepEqual(properties.kind, { enum: ["file"] });
  assert.deepEqual(properties.when, { type: "string", format: "date-time" });
});

Deno.test("a tool without arguments renders as a closed empty object", () => {
  assert.deepEqual(strictSchema({ type: "object" }), {
    type: "object",
    properties: {},
    required: [],
    additionalProperties: false,
  });
});

Deno.test("schemas strict mode cannot express are not rewritten", () => {
  const cases: Record<string, unknown>[] = [
    { properties: { a: { type: "string" } } }, // root without type
    { type: "object", additionalProperties: { type: "string" } }, // free-form map
    { type: "object", properties: { a: { type: "object" } } }, // any object
    { type: "object", properties: { a: {} } }, // any value
    { type: "object", properties: { a: { type: "array" } } }, // items unknown
    { type: "object", properties: { a: { oneOf: [{ type: "string" }, { type: "number" }] } } },
    { type: "object", properties: { a: { allOf: [{ type: "string" }] } } },
    { type: "object", properties: { a: { type: "string", not: { enum: ["x"] } } } },
    { type: "object", properties: { a: { $ref: "https://example.com/schema.json" } } },
    { type: "object", patternProperties: { "^x": { type: "string" } } },
    { type: "object", properties: { a: { type: "array", prefixItems: [{ type: "string" }] } } },
    { anyOf: [{ type: "object" }] },
  ];
  for (const schema of cases) {
    assert.equal(strictSchema(schema), undefined, JSON.stringify(schema));
  }
});

Deno.test("a recursive schema keeps its $ref instead of being inlined forever", () => {
  const tree = {
    type: "object",
    properties: {
      root: { $ref: "#/$defs/node" },
    },
    required: ["root"],
    $defs: {
      node: {
        type: "object",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/node" } },
        },
        required: ["name", "children"],
      },
    },
  };
  const schema = strictSchema(tree);
  assert.ok(schema);
  const defs = schema.$defs as Record<string, Record<string, Record<string, unknown>>>;
  assert.deepEqual(defs.node.properties.children, {
    type: "array",
    items: { $ref: "#/$defs/node" },
  });
  // With a sibling, the self-reference would have to be inlined without end.
  const selfInlined = structuredClone(tree);
  (selfInlined.$defs.node.properties.children.items as Record<string, unknown>).description =
    "A child.";
  assert.equal(strictSchema(selfInlined), undefined);
});

Deno.test("the plain schema is the server's, minus the $schema tag", () => {
  const input = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { a: { type: "string", default: "x" } },
    additionalProperties: { type: "number" },
  };
  const plain = plainSchema(input);
  assert.deepEqual(plain, {
    type: "object",
    properties: { a: { type: "string", default: "x" } },
    additionalProperties: { type: "number" },
  });
  assert.equal(input.$schema, "http://json-schema.org/draft-07/schema#", "input untouched");
});
