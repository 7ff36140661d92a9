/**
 * Reading the JSON Schemas that MCP servers send as `inputSchema`: following local `$ref`s and
 * deciding whether a schema accepts `null`. Used when rendering schemas for providers and when
 * turning a model's arguments back into what the server expects.
 */
import type { JsonSchema } from "../tools/schema.ts";
import { isPlainObject } from "../tools/validate.ts";

/** A JSON Schema node: an object, or a boolean schema (`true` accepts anything). */
export type SchemaNode = JsonSchema | boolean;

/**
 * The schema a local `$ref` (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer into `root`)
 * points at, or undefined when `ref` is remote or dangling.
 */
export function resolveRef(root: JsonSchema, ref: string): SchemaNode | undefined {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodePointer(raw);
    if (key === undefined) return undefined;
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return isPlainObject(node) || typeof node === "boolean" ? node as SchemaNode : undefined;
}

function decodePointer(token: string): string | undefined {
  try {
    return decodeURIComponent(token).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return undefined; // a malformed %-escape points nowhere
  }
}

/** Follows `$ref`s (cycles stop) until a schema without one; undefined when one is unresolvable. */
export function deref(root: JsonSchema, node: SchemaNode): SchemaNode | undefined {
  const seen = new Set<string>();
  let current: SchemaNode | undefined = node;
  while (isPlainObject(current) && typeof current.$ref === "string") {
    if (seen.has(current.$ref)) return undefined;
    seen.add(current.$ref);
    current = resolveRef(root, current.$ref);
  }
  return current;
}

const CONSTRAINING = ["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not"];

/** True when `null` is a valid value for `node` (within `root`, for `$ref`s). */
export function acceptsNull(root: JsonSchema, node: SchemaNode, depth = 0): boolean {
  if (typeof node === "boolean") return node;
  if (depth > 32) return false;
  if (!CONSTRAINING.some((k) => Object.hasOwn(node, k))) return true;
  if (typeof node.$ref === "string") {
    const target = resolveRef(root, node.$ref);
    if (target === undefined || !acceptsNull(root, target, depth + 1)) return false;
  }
  if (node.type !== undefined) {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (!types.includes("null")) return false;
  }
  if (Array.isArray(node.enum) && !node.enum.includes(null)) return false;
  if (Object.hasOwn(node, "const") && node.const !== null) return false;
  const branches = (key: string) =>
    Array.isArray(node[key]) ? (node[key] as SchemaNode[]) : undefined;
  const anyOf = branches("anyOf");
  if (anyOf && !anyOf.some((b) => acceptsNull(root, b, depth + 1))) return false;
  const oneOf = branches("oneOf");
  if (oneOf && !oneOf.some((b) => acceptsNull(root, b, depth + 1))) return false;
  const allOf = branches("allOf");
  if (allOf && !allOf.every((b) => acceptsNull(root, b, depth + 1))) return false;
  if (node.not !== undefined && acceptsNull(root, node.not as SchemaNode, depth + 1)) return false;
  return true;
}

/** The property schemas and required names of an object schema (empty when it declares none). */
export function objectShape(
  node: SchemaNode | undefined,
): { properties: Record<string, SchemaNode>; required: string[] } {
  if (!isPlainObject(node)) return { properties: {}, required: [] };
  const properties = isPlainObject(node.properties)
    ? node.properties as Record<string, SchemaNode>
    : {};
  const required = Array.isArray(node.required)
    ? node.required.filter((r): r is string => typeof r === "string")
    : [];
  return { properties, required };
}
