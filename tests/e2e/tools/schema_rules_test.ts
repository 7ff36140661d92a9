/**
 * The provider schema rules, checked independently of the implementation that renders them: each
 * rule is walked over every nesting level of what `deft tools --json` really prints, and over a
 * synthetic tool nested deeper than any built-in one. The golden files only pin what was rendered;
 * these say what must hold.
 */
import assert from "node:assert/strict";
import { renderDefinition, type ToolDefinition } from "../../../src/tools/schema.ts";
import type { ToolParameter } from "../../../src/tools/base.ts";
import { runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";

type Schema = Record<string, unknown>;

const NON_STRICT = ["anthropic", "openai_compatible", "openrouter", "google", "ollama"];

async function definitions(provider: string): Promise<ToolDefinition[]> {
  await using homeDir = await tempDir("deft-schema-home-");
  const home = homeDir.path;
  const r = await runDeft(["tools", "--json", "--provider", provider], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const types = (s: Schema): unknown[] => Array.isArray(s.type) ? s.type : [s.type];
const isObject = (s: Schema) => types(s).includes("object") && s.properties !== undefined;

/** Every object schema inside `schema` (itself included), with a path for messages. */
function objects(schema: Schema, path: string): [string, Schema][] {
  const found: [string, Schema][] = isObject(schema) ? [[path, schema]] : [];
  for (const [name, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    found.push(...objects(sub, `${path}.${name}`));
  }
  if (schema.items) found.push(...objects(schema.items as Schema, `${path}[]`));
  return found;
}

/** OpenAI strict mode at every level; `plain` is the same tool for a non-strict provider. */
function assertStrict(def: ToolDefinition, plain: ToolDefinition): void {
  assert.equal(def.parameters.type, "object", `${def.name}: the root is an object`);
  const plainObjects = new Map(objects(plain.parameters, def.name));
  for (const [path, schema] of objects(def.parameters, def.name)) {
    const props = Object.keys(schema.properties as Schema);
    assert.equal(schema.additionalProperties, false, `${path}: additionalProperties: false`);
    assert.deepEqual(
      [...(schema.required as string[])].sort(),
      [...props].sort(),
      `${path}: every property is required`,
    );
    // Optional means: not required for a provider without strict mode. Those, and only those,
    // are nullable here.
    const optional = new Set(props);
    for (const r of (plainObjects.get(path)?.required ?? []) as string[]) optional.delete(r);
    assert.ok(plainObjects.has(path), `${path}: the same object exists without strict mode`);
    for (const name of props) {
      const prop = (schema.properties as Record<string, Schema>)[name];
      if (prop.type === undefined) continue; // any JSON value: the tool is not strict
      const nullable = types(prop).includes("null");
      assert.equal(nullable, optional.has(name), `${path}.${name}: nullable iff optional`);
      if (prop.enum && nullable) {
        assert.ok((prop.enum as unknown[]).includes(null), `${path}.${name}: enum admits null`);
      }
    }
  }
  // Items of an array are never nullable.
  const walk = (s: Schema, path: string) => {
    if (s.items) {
      assert.ok(!types(s.items as Schema).includes("null"), `${path}[]: items are not nullable`);
      walk(s.items as Schema, `${path}[]`);
    }
    for (const [n, sub] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
      walk(sub, `${path}.${n}`);
    }
  };
  walk(def.parameters, def.name);
}

/** Without strict mode: no null types, no forced additionalProperties, required ⊆ properties. */
function assertPlain(def: ToolDefinition): void {
  assert.equal(def.strict, undefined, `${def.name}: strict is for openai only`);
  for (const [path, schema] of objects(def.parameters, def.name)) {
    const props = Object.keys(schema.properties as Schema);
    assert.equal(schema.additionalProperties, undefined, `${path}: no additionalProperties`);
    for (const r of (schema.required ?? []) as string[]) {
      assert.ok(props.includes(r), `${path}: required '${r}' is a property`);
    }
    for (const [name, prop] of Object.entries(schema.properties as Record<string, Schema>)) {
      assert.ok(!types(prop).includes("null"), `${path}.${name}: not nullable`);
      if (prop.enum) assert.ok(!(prop.enum as unknown[]).includes(null));
    }
  }
}

Deno.test("deft tools --json: openai strict rules hold at every level of every built-in tool", async () => {
  const [strict, plain] = await Promise.all([definitions("openai"), definitions("anthropic")]);
  assert.deepEqual(strict.map((d) => d.name), plain.map((d) => d.name));
  assert.ok(strict.length >= 6, "the built-in tools are listed");
  for (const [i, def] of strict.entries()) {
    assertStrict(def, plain[i]);
    // A strict tool declares every parameter's type; a non-strict one says so.
    if (def.strict === false) {
      assert.ok(
        objects(def.parameters, def.name).some(([, s]) =>
          Object.values(s.properties as Record<string, Schema>).some((p) =>
            p.type === undefined || (types(p).includes("object") && !p.properties)
          )
        ),
        `${def.name}: strict: false only when a parameter takes any JSON value`,
      );
    } else {
      assert.equal(def.strict, true, `${def.name}: strict`);
    }
  }
});

for (const provider of NON_STRICT) {
  Deno.test(`deft tools --json: ${provider} gets plain schemas (only required parameters required)`, async () => {
    const defs = await definitions(provider);
    assert.ok(defs.length >= 6);
    for (const def of defs) assertPlain(def);
    // The editor's `command` and `path` are required everywhere; its other parameters are not.
    const editor = defs.find((d) => d.name === "str_replace_based_edit_tool")!;
    assert.deepEqual([...editor.parameters.required as string[]].sort(), ["command", "path"]);
  });
}

Deno.test("a tool nested deeper than any built-in keeps the rules at every level", () => {
  const leaf: ToolParameter = {
    name: "leaf",
    type: "object",
    description: "Innermost.",
    properties: [
      { name: "must", type: "string", description: "Required.", required: true },
      { name: "may", type: "integer", description: "Optional." },
      { name: "pick", type: "string", description: "Optional enum.", enum: ["x", "y"] },
    ],
  };
  const params: ToolParameter[] = [
    { name: "top", type: "string", description: "Required top.", required: true },
    {
      name: "list",
      type: "array",
      description: "Objects in an array.",
      items: {
        type: "object",
        properties: [
          { ...leaf, required: true },
          { name: "tags", type: "array", description: "Tags.", items: { type: "string" } },
        ],
      },
    },
    {
      name: "outer",
      type: "object",
      description: "Objects in objects.",
      properties: [{
        name: "middle",
        type: "object",
        description: "Middle.",
        required: true,
        properties: [leaf],
      }],
    },
  ];
  const tool = { name: "deep", description: "Deep.", parameters: params };
  const strict = renderDefinition(tool, "openai");
  const plain = renderDefinition(tool, "anthropic");
  assert.equal(strict.strict, true);
  assertStrict(strict, plain);
  assertPlain(plain);
  // The walk really reached the innermost objects (six object schemas in all).
  assert.equal(objects(strict.parameters, "deep").length, 6);
  const inner = (((strict.parameters.properties as Schema).outer as Schema).properties as Schema)
    .middle as Schema;
  assert.deepEqual(((inner.properties as Schema).leaf as Schema).type, ["object", "null"]);
});
