/**
 * `McpTool`: one tool of an MCP server, as a Deft tool. Its name carries the server
 * (`mcp__<server>__<tool>`), its JSON schema goes to the provider as the server wrote it (see
 * `strict.ts`), and a call goes to the server through the shared connection.
 */
import {
  type CallEffect,
  Tool,
  type ToolContext,
  type ToolExecResult,
  type ToolParameter,
} from "../tools/base.ts";
import { type JsonSchema, type ToolDefinition, usesStrictSchema } from "../tools/schema.ts";
import type { McpConnection, RemoteTool } from "./client.ts";
import { prepareArguments, topLevelParameters } from "./arguments.ts";
import { plainSchema, strictSchema } from "./strict.ts";

/** A remote MCP tool wrapped as a Deft tool. */
export class McpTool extends Tool {
  readonly name: string;
  readonly description: string;
  /**
   * Untyped top-level properties, for the executor's checks (see `arguments.ts`); the model sees
   * the full `inputSchema` through `jsonDefinition`.
   */
  readonly parameters: readonly ToolParameter[];
  /** The server's name in the configuration. */
  readonly serverName: string;
  /** The tool's name on its server. */
  readonly remoteName: string;
  /** The JSON schema of the arguments, as the server listed it. */
  readonly inputSchema: JsonSchema;
  /**
   * The server marks the tool as one that only reads (`readOnlyHint`) and the server's word
   * counts (it comes from the user's own config): then its calls are not asked about.
   */
  readonly readOnly: boolean;
  readonly #connection: McpConnection;
  readonly #definitions = new Map<string, ToolDefinition>();

  constructor(
    context: ToolContext,
    connection: McpConnection,
    remote: RemoteTool,
    name: string,
  ) {
    super(context);
    this.#connection = connection;
    this.serverName = connection.name;
    this.remoteName = remote.name;
    this.name = name;
    this.description = remote.description?.trim() ||
      remote.title?.trim() ||
      `Tool '${remote.name}' of MCP server '${connection.name}'.`;
    this.inputSchema = remote.inputSchema as JsonSchema;
    this.parameters = topLevelParameters(this.inputSchema);
    this.readOnly = connection.annotationsTrusted && remote.annotations?.readOnlyHint === true;
  }

  /**
   * Reads, when the trusted server says so; else unknown: an MCP server's tool can run any
   * program, so the approval gate asks about it as about any tool that cannot say what it does.
   */
  override effects(): CallEffect | undefined {
    return this.readOnly ? { kind: "read" } : undefined;
  }

  /**
   * The server's schema for `provider`: as written for most providers; for OpenAI in strict form
   * when strict mode can express it, else as written with `strict: false`.
   */
  override jsonDefinition(provider = this.context.provider): ToolDefinition {
    let definition = this.#definitions.get(provider);
    if (!definition) {
      definition = this.#render(provider);
      this.#definitions.set(provider, definition);
    }
    return definition;
  }

  #render(provider: string): ToolDefinition {
    const base = { name: this.name, description: this.description };
    if (!usesStrictSchema(provider)) return { ...base, parameters: plainSchema(this.inputSchema) };
    const strict = strictSchema(this.inputSchema);
    return strict
      ? { ...base, parameters: strict, strict: true }
      : { ...base, parameters: plainSchema(this.inputSchema), strict: false };
  }

  execute(args: Record<string, unknown>): Promise<ToolExecResult> {
    return this.#connection.callTool(this.remoteName, prepareArguments(this.inputSchema, args));
  }

  /** Stops the tool's server: every tool of that server shares the connection. */
  override close(): Promise<void> {
    return this.#connection.close();
  }
}
