/**
 * Renders an MCP tool's `inputSchema` for providers.
 *
 * Every provider gets the server's schema as it is (only the `$schema` dialect tag is dropped: it
 * tells the model nothing and some providers reject it). For OpenAI the schema is also rewritten
 * for strict mode when it can be: every property listed in `required`, optional ones made
 * nullable, `additionalProperties: false` on every object. Keywords strict mode does not take
 * but that only narrow a value (`default`, `minLength`, an unsupported `format`, ...) move into
 * the description, since the server still checks them. A schema that needs what strict mode
 * cannot express (free-form objects, `oneOf`, `allOf`, `not`, tuples, remote `$ref`s, values of
 * any type) is sent as it is, with `strict: false`.
 */
import type { JsonSchema } from "../tools/schema.ts";
import { isPlainObject } from "../tools/validate.ts";
import { resolveRef, type SchemaNode } from "./json_schema.ts";

/** The server's schema for non-strict use: a copy without the root `$schema` tag. */
export function plainSchema(inputSchema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = inputSchema;
  return rest;
}

/** The strict-mode rewrite of `inputSchema`, or undefined when strict mode cannot express it. */
export function strictSchema(inputSchema: JsonSchema): JsonSchema | undefined {
  if (!isObjectType(inputSchema)) return undefined;
  return new StrictRenderer(inputSchema).root();
}

const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

const DROPPED = new Set([
  "$schema",
  "$id",
  "$comment",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentEncoding",
  "contentMediaType",
]);

/** Keywords that only narrow a value: stated in the description instead. */
const NOTED = new Set([
  "default",
  "minLength",
  "maxLength",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "minContains",
  "maxContains",
]);

const KEPT = new Set([
  "type",
  "title",
  "description",
  "enum",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
]);

const STRUCTURAL = new Set(["properties", "required", "additionalProperties", "items", "anyOf"]);

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array", "null"]);

/** Thrown inside the renderer when a schema has no strict-mode form. */
class NotExpressible extends Error {}

class StrictRenderer {
  readonly #root: JsonSchema;
  readonly #inlining: string[] = [];

  constructor(root: JsonSchema) {
    this.#root = root;
  }

  root(): JsonSchema | undefined {
    try {
      const { $defs, definitions, ...rest } = this.#root;
      const schema = this.#node(rest, true);
      for (const [key, defs] of [["$defs", $defs], ["definitions", definitions]] as const) {
        if (defs === undefined) continue;
        if (!isPlainObject(defs)) throw new NotExpressible();
        schema[key] = Object.fromEntries(
          Object.entries(defs).map(([name, def]) => [name, this.#node(def as SchemaNode, false)]),
        );
      }
      return schema;
    } catch (e) {
      if (e instanceof NotExpressible) return undefined;
      throw e;
    }
  }

  #node(node: SchemaNode, isRoot = false): JsonSchema {
    if (!isPlainObject(node)) throw new NotExpressible();
    if (typeof node.$ref === "string") return this.#ref(node);
    const out: JsonSchema = {};
    const notes: string[] = [];
    for (const [key, value] of Object.entries(node)) {
      if (DROPPED.has(key) || STRUCTURAL.has(key)) continue;
      if (key === "const") {
        out.enum = [value];
      } else if (key === "format" && !STRICT_FORMATS.has(String(value))) {
        notes.push(`format: ${String(value)}`);
      } else if (NOTED.has(key)) {
        notes.push(`${key}: ${JSON.stringify(value)}`);
      } else if (KEPT.has(key)) {
        out[key] = value;
      } else {
        throw new NotExpressible();
      }
    }
    if (notes.length > 0) {
      const description = typeof out.description === "string" ? `${out.description} ` : "";
      out.description = `${description}(${notes.join("; ")})`;
    }
    const types = typeList(node.type);
    if (types && !types.every((t) => TYPES.has(t))) throw new NotExpressible();
    if (Array.isArray(node.anyOf)) {
      if (isRoot || node.anyOf.length === 0) throw new NotExpressible();
      out.anyOf = node.anyOf.map((branch) => this.#node(branch));
    }
    const isObject = types?.includes("object") ||
      (!types && (node.properties !== undefined || node.additionalProperties !== undefined));
    if (isObject) this.#object(node, out, isRoot);
    else if (node.properties !== undefined || node.required !== undefined) {
      throw new NotExpressible();
    }
    if (types?.includes("array")) {
      if (!isPlainObject(node.items)) throw new NotExpressible();
      out.items = this.#node(node.items);
    } else if (node.items !== undefined) {
      throw new NotExpressible();
    }
    // A value of any type cannot be described in strict mode.
    if (out.type === undefined && out.enum === undefined && out.anyOf === undefined) {
      throw new NotExpressible();
    }
    return out;
  }

  #object(node: JsonSchema, out: JsonSchema, isRoot: boolean): void {
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) {
      throw new NotExpressible();
    }
    const properties = node.properties ?? {};
    if (!isPlainObject(properties)) throw new NotExpressible();
    // `{type: "object"}` alone means "any object" below the root; at the root it is how MCP
    // servers declare a tool without arguments.
    if (!isRoot && Object.keys(properties).length === 0) throw new NotExpressible();
    const required = Array.isArray(node.required) ? node.required : [];
    if (!required.every((name) => typeof name === "string" && Object.hasOwn(properties, name))) {
      throw new NotExpressible();
    }
    out.type = node.type ?? "object";
    out.properties = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => {
        const rendered = this.#node(schema as SchemaNode);
        return [name, required.includes(name) ? rendered : nullable(rendered)];
      }),
    );
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }

  /**
   * Strict mode takes a `$ref` only on its own, so a `$ref` with siblings (a description, say)
   * is replaced by what it points at, as OpenAI's own SDK does.
   */
  #ref(node: JsonSchema): JsonSchema {
    const ref = node.$ref as string;
    const target = resolveRef(this.#root, ref);
    if (target === undefined || typeof target === "boolean") throw new NotExpressible();
    const siblings = Object.keys(node).filter((k) => k !== "$ref" && !DROPPED.has(k));
    if (siblings.length === 0) return { $ref: ref };
    if (this.#inlining.includes(ref)) throw new NotExpressible();
    this.#inlining.push(ref);
    try {
      const { $ref: _ref, ...rest } = node;
      return this.#node({ ...target, ...rest });
    } finally {
      this.#inlining.pop();
    }
  }
}

function typeList(type: unknown): string[] | undefined {
  if (type === undefined) return undefined;
  if (typeof type === "string") return [type];
  if (Array.isArray(type) && type.length > 0 && type.every((t) => typeof t === "string")) {
    return type;
  }
  throw new NotExpressible();
}

/** Lets `schema` also take `null`, the strict-mode way of saying "optional". */
function nullable(schema: JsonSchema): JsonSchema {
  if (schema.$ref !== undefined) return { anyOf: [schema, { type: "null" }] };
  const out = { ...schema };
  if (Array.isArray(out.anyOf)) {
    const branches = out.anyOf as JsonSchema[];
    if (!branches.some((b) => b.type === "null")) out.anyOf = [...branches, { type: "null" }];
    return out;
  }
  if (out.type !== undefined) {
    const types = typeList(out.type)!;
    if (!types.includes("null")) out.type = [...types, "null"];
  }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) {
    out.enum = [...out.enum, null];
  }
  return out;
}

function isObjectType(schema: JsonSchema): boolean {
  return schema.type === "object";
}
