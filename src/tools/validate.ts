/**
 * Checks a model's arguments against a tool's declared parameters before the tool runs.
 *
 * Nothing is coerced: a number sent as a string is an error, not a number. `null` for an optional
 * typed parameter means "not given" (OpenAI's strict mode sends it for every omitted field) and is
 * dropped; for a parameter that accepts any JSON value, `null` is kept as the value.
 */
import type { ParamSchema, ToolParameter } from "./base.ts";

/** The outcome of validation: the cleaned arguments, or every problem found. */
export type Validation =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; error: string };

/** Validates `args` for a tool with `params`; `toolName` appears in the error text. */
export function validateArguments(
  toolName: string,
  params: readonly ToolParameter[],
  args: unknown,
): Validation {
  if (!isPlainObject(args)) {
    return {
      ok: false,
      error: `Arguments for tool '${toolName}' must be a JSON object, got ${describe(args)}.`,
    };
  }
  const problems: string[] = [];
  const cleaned = checkObject(params, args, "", problems);
  if (problems.length === 0) return { ok: true, args: cleaned };
  const expected = params.length === 0
    ? "It takes no arguments."
    : `Its parameters: ${params.map(signature).join(", ")}.`;
  return {
    ok: false,
    error: `Invalid arguments for tool '${toolName}':\n- ${problems.join("\n- ")}\n${expected}`,
  };
}

// The names each parameter list declares, built once per list: a tool's parameters never change,
// and every call of it is checked against them.
const declaredNames = new WeakMap<readonly ToolParameter[], ReadonlySet<string>>();

function namesOf(params: readonly ToolParameter[]): ReadonlySet<string> {
  let names = declaredNames.get(params);
  if (!names) {
    names = new Set(params.map((p) => p.name));
    declaredNames.set(params, names);
  }
  return names;
}

function checkObject(
  params: readonly ToolParameter[],
  value: Record<string, unknown>,
  prefix: string,
  problems: string[],
): Record<string, unknown> {
  const known = namesOf(params);
  const cleaned: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (!known.has(key)) problems.push(`unknown argument \`${prefix}${key}\``);
  }
  for (const param of params) {
    const path = `${prefix}${param.name}`;
    const given = Object.hasOwn(value, param.name) ? value[param.name] : undefined;
    // null means "not given", except for a parameter that takes any JSON value: there it is a value.
    if (given === undefined || (given === null && param.type !== undefined)) {
      if (param.required) {
        problems.push(`missing required argument \`${path}\` (${typeName(param)})`);
      }
      continue;
    }
    cleaned[param.name] = checkValue(param, given, path, problems);
  }
  return cleaned;
}

function checkValue(
  schema: ParamSchema,
  value: unknown,
  path: string,
  problems: string[],
): unknown {
  if (!schema.type) return value;
  if (!hasType(schema.type, value)) {
    problems.push(`\`${path}\` must be ${article(typeName(schema))}, got ${describe(value)}`);
    return value;
  }
  if (schema.enum && !schema.enum.includes(value as string | number)) {
    const allowed = schema.enum.map((v) => JSON.stringify(v)).join(", ");
    problems.push(`\`${path}\` must be one of ${allowed}, got ${JSON.stringify(value)}`);
    return value;
  }
  if (schema.type === "array" && schema.items) {
    const items = schema.items;
    return (value as unknown[]).map((item, i) =>
      checkValue(items, item, `${path}[${i}]`, problems)
    );
  }
  if (schema.type === "object" && schema.properties) {
    return checkObject(schema.properties, value as Record<string, unknown>, `${path}.`, problems);
  }
  return value;
}

function hasType(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return isPlainObject(value);
  }
  return true;
}

function typeName(schema: ParamSchema): string {
  if (!schema.type) return "any JSON value";
  if (schema.type === "array" && schema.items) return `array of ${typeName(schema.items)}s`;
  return schema.type;
}

function signature(param: ToolParameter): string {
  return `${param.name}${param.required ? "" : "?"}: ${typeName(param)}`;
}

function article(name: string): string {
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `a string (${JSON.stringify(shown)})`;
  }
  if (typeof value === "number") {
    return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  }
  if (typeof value === "object") return "an object";
  return `${article(typeof value)} (${String(value)})`;
}

/** True for `{...}` values (not arrays, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
