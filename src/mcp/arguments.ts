/**
 * Between the model's arguments and an MCP server's `inputSchema`.
 *
 * The executor validates arguments against a tool's `parameters` before the tool runs, and its
 * parameter language is far smaller than JSON Schema (no unions, refs, patterns, nullable types).
 * So an MCP tool declares only its top-level properties, without types: the executor then checks
 * that the arguments are an object, that no unknown top-level key is given and that required
 * ones are present, and the server, which owns the schema, checks everything else and answers
 * with an `isError` result the model can read.
 *
 * Untyped parameters take any JSON value, `null` included, so the executor passes `null`s on.
 * OpenAI's strict mode sends `null` for every optional property it leaves out (`strict.ts` made
 * them nullable), and a server whose schema does not allow `null` there would refuse the call:
 * `prepareArguments` drops those `null`s, at every depth, and keeps the ones the schema accepts.
 */
import type { ToolParameter } from "../tools/base.ts";
import type { JsonSchema } from "../tools/schema.ts";
import { isPlainObject } from "../tools/validate.ts";
import { acceptsNull, deref, objectShape, type SchemaNode } from "./json_schema.ts";

/** The executor's view of `inputSchema`: one untyped parameter per top-level property. */
export function topLevelParameters(inputSchema: JsonSchema): ToolParameter[] {
  const { properties, required } = objectShape(inputSchema);
  return Object.entries(properties).map(([name, schema]) => {
    const described = deref(inputSchema, schema);
    const description = isPlainObject(described) && typeof described.description === "string"
      ? described.description
      : "";
    return { name, description, required: required.includes(name) };
  });
}

/** `args` (already checked by the executor) in the form the server's schema expects. */
export function prepareArguments(
  inputSchema: JsonSchema,
  args: Record<string, unknown>,
): Record<string, unknown> {
  return reshape(inputSchema, inputSchema, args, 0) as Record<string, unknown>;
}

function reshape(root: JsonSchema, node: SchemaNode, value: unknown, depth: number): unknown {
  if (depth > 32) return value;
  const schema = deref(root, node);
  if (!isPlainObject(schema)) return value;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!isPlainObject(items)) return value;
    return value.map((item) => reshape(root, items, item, depth + 1));
  }
  if (!isPlainObject(value)) return value;
  const shape = objectSchemaFor(root, schema, value);
  if (!shape) return value;
  const { properties, required } = shape;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const propSchema = properties[key];
    if (propSchema === undefined) {
      out[key] = item;
    } else if (item === null) {
      if (required.includes(key) || acceptsNull(root, propSchema)) out[key] = null;
    } else {
      out[key] = reshape(root, propSchema, item, depth + 1);
    }
  }
  return out;
}

/**
 * The object schema that describes `value`: `schema` itself when it declares properties, else
 * the `anyOf`/`oneOf` branch whose properties cover the value's keys.
 */
function objectSchemaFor(
  root: JsonSchema,
  schema: JsonSchema,
  value: Record<string, unknown>,
): ReturnType<typeof objectShape> | undefined {
  const own = objectShape(schema);
  if (Object.keys(own.properties).length > 0) return own;
  const branches = [
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : []),
  ] as SchemaNode[];
  const keys = Object.keys(value);
  for (const branch of branches) {
    const shape = objectShape(deref(root, branch));
    const names = Object.keys(shape.properties);
    if (names.length > 0 && keys.every((k) => names.includes(k))) return shape;
  }
  return undefined;
}
