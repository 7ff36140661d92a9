/**
 * Renders a tool's parameters as the JSON schema a provider expects.
 *
 * OpenAI's strict mode wants every property listed in `required`, optional ones made nullable, and
 * `additionalProperties: false` on every object. Other providers get a plain schema whose `required`
 * lists only the required parameters. A parameter that accepts any JSON value (or a free-form
 * object) cannot be expressed in strict mode, so such a tool is rendered with `strict: false`.
 */

/** JSON types a parameter may declare. A parameter without a type accepts any JSON value. */
export type ParamType = "string" | "number" | "integer" | "boolean" | "array" | "object";

/** The schema of a value: its type, allowed values, array items or object properties. */
export interface ParamSchema {
  type?: ParamType;
  description?: string;
  enum?: readonly (string | number)[];
  items?: ParamSchema;
  properties?: readonly ToolParameter[];
}

/** One named parameter of a tool. Parameters are optional unless `required` is true. */
export interface ToolParameter extends ParamSchema {
  name: string;
  description: string;
  required?: boolean;
}

/** Provider families whose schema rules differ. Unknown names render like `anthropic`. */
export type Provider = string;

/** A JSON schema object. */
export type JsonSchema = { [key: string]: unknown };

/** What a provider receives for one tool. `strict` is present for `openai` only. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  strict?: boolean;
}

/** The parts of a tool that its definition is made of. */
export interface Describable {
  readonly name: string;
  readonly description: string;
  readonly parameters: readonly ToolParameter[];
}

/** True for providers whose tool schemas follow OpenAI's strict-mode rules. */
export function usesStrictSchema(provider: Provider): boolean {
  return provider === "openai";
}

/** Builds `{name, description, parameters}` (plus `strict` for openai) for `tool`. */
export function renderDefinition(tool: Describable, provider: Provider): ToolDefinition {
  const strict = usesStrictSchema(provider);
  const parameters = renderObject(tool.parameters, strict);
  if (!strict) return { name: tool.name, description: tool.description, parameters };
  return {
    name: tool.name,
    description: tool.description,
    parameters,
    strict: tool.parameters.every(strictExpressible),
  };
}

function renderObject(properties: readonly ToolParameter[], strict: boolean): JsonSchema {
  const schema: JsonSchema = {
    type: "object",
    properties: Object.fromEntries(
      properties.map((p) => [p.name, renderProperty(p, strict, !p.required)]),
    ),
    required: properties.filter((p) => strict || p.required).map((p) => p.name),
  };
  if (strict) schema.additionalProperties = false;
  return schema;
}

function renderProperty(param: ParamSchema, strict: boolean, nullable: boolean): JsonSchema {
  const schema: JsonSchema = {};
  if (param.type) schema.type = strict && nullable ? [param.type, "null"] : param.type;
  if (param.description) schema.description = param.description;
  if (param.enum) schema.enum = strict && nullable ? [...param.enum, null] : [...param.enum];
  if (param.items) schema.items = renderProperty(param.items, strict, false);
  if (param.type === "object" && param.properties) {
    const nested = renderObject(param.properties, strict);
    schema.properties = nested.properties;
    schema.required = nested.required;
    if (strict) schema.additionalProperties = false;
  }
  return schema;
}

function strictExpressible(param: ParamSchema): boolean {
  if (!param.type) return false;
  if (param.type === "object") return (param.properties ?? []).every(strictExpressible);
  if (param.type === "array") return param.items !== undefined && strictExpressible(param.items);
  return true;
}
