import assert from "node:assert/strict";
import { renderDefinition } from "../../src/tools/schema.ts";
import type { ToolParameter } from "../../src/tools/base.ts";
import { createTools, registeredToolNames } from "../../src/tools/registry.ts";
import { FakeTool, testContext } from "../helpers/tools.ts";

const PARAMS: ToolParameter[] = [
  { name: "mode", type: "string", description: "Mode.", enum: ["a", "b"], required: true },
  { name: "count", type: "integer", description: "How many." },
  {
    name: "range",
    type: "array",
    description: "Two numbers.",
    items: { type: "integer" },
  },
  {
    name: "options",
    type: "object",
    description: "Nested options.",
    properties: [
      { name: "deep", type: "boolean", description: "Go deep.", required: true },
      { name: "label", type: "string", description: "A label." },
    ],
  },
];

Deno.test("openai strict mode: all required, optional nullable, no additional properties", () => {
  const def = renderDefinition(new FakeTool("fake", PARAMS), "openai");
  assert.deepEqual(def, {
    name: "fake",
    description: "A tool for tests.",
    strict: true,
    parameters: {
      type: "object",
      properties: {
        mode: { type: "string", description: "Mode.", enum: ["a", "b"] },
        count: { type: ["integer", "null"], description: "How many." },
        range: {
          type: ["array", "null"],
          description: "Two numbers.",
          items: { type: "integer" },
        },
        options: {
          type: ["object", "null"],
          description: "Nested options.",
          properties: {
            deep: { type: "boolean", description: "Go deep." },
            label: { type: ["string", "null"], description: "A label." },
          },
          required: ["deep", "label"],
          additionalProperties: false,
        },
      },
      required: ["mode", "count", "range", "options"],
      additionalProperties: false,
    },
  });
});

Deno.test("other providers: only required parameters are required, nothing nullable", () => {
  const def = renderDefinition(new FakeTool("fake", PARAMS), "anthropic");
  assert.deepEqual(def, {
    name: "fake",
    description: "A tool for tests.",
    parameters: {
      type: "object",
      properties: {
        mode: { type: "string", description: "Mode.", enum: ["a", "b"] },
        count: { type: "integer", description: "How many." },
        range: { type: "array", description: "Two numbers.", items: { type: "integer" } },
        options: {
          type: "object",
          description: "Nested options.",
          properties: {
            deep: { type: "boolean", description: "Go deep." },
            label: { type: "string", description: "A label." },
          },
          required: ["deep"],
        },
      },
      required: ["mode"],
    },
  });
});

Deno.test("an optional enum is nullable in strict mode and its enum admits null", () => {
  const def = renderDefinition(
    new FakeTool("e", [{ name: "k", type: "string", description: "K.", enum: ["x"] }]),
    "openai",
  );
  const k = (def.parameters.properties as Record<string, unknown>).k;
  assert.deepEqual(k, { type: ["string", "null"], description: "K.", enum: ["x", null] });
});

Deno.test("a parameter that takes any JSON value makes the openai definition non-strict", () => {
  const def = renderDefinition(
    new FakeTool("v", [{ name: "value", description: "Any JSON." }]),
    "openai",
  );
  assert.equal(def.strict, false);
  const value = (def.parameters.properties as Record<string, unknown>).value;
  assert.deepEqual(value, { description: "Any JSON." });
});

Deno.test("definitions are computed once per tool instance and provider", () => {
  const tool = new FakeTool("once", PARAMS);
  assert.equal(tool.jsonDefinition(), tool.jsonDefinition());
  assert.notEqual(tool.jsonDefinition("openai"), tool.jsonDefinition("anthropic"));
  assert.equal(tool.jsonDefinition("openai"), tool.jsonDefinition("openai"));
});

for (const provider of ["openai", "anthropic"]) {
  Deno.test(`built-in tool definitions for ${provider} match the golden file`, async () => {
    const tools = createTools(testContext("/tmp", provider), registeredToolNames());
    const actual = JSON.stringify(tools.map((t) => t.jsonDefinition()), null, 2) + "\n";
    const golden = new URL(`../fixtures/golden/tools.${provider}.json`, import.meta.url);
    if (Deno.env.get("UPDATE_GOLDEN") === "1") await Deno.writeTextFile(golden, actual);
    assert.equal(actual, await Deno.readTextFile(golden));
  });
}
