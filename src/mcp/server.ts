/**
 * Deft's tools as an MCP server: `tools/list` answers with each tool's name, description and
 * plain JSON schema (as rendered for Anthropic, which takes JSON Schema as it is), and
 * `tools/call` runs the call through the executor, so arguments are validated and paths confined
 * exactly as in `deft tool`.
 *
 * Errors follow the MCP specification: a call to a tool that does not exist is a protocol error
 * (JSON-RPC -32602, invalid params); everything that goes wrong inside a call, invalid arguments
 * included, is a result with `isError: true` whose text the model can read and act on.
 *
 * The low-level `Server` is used, not `McpServer`, because Deft's schemas are JSON Schema already
 * and `McpServer` wants zod.
 */
// The SDK's export map has no types for `*.js` subpaths; take them from the extension-less ones.
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool as ListedTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ToolCallResult, ToolExecutor } from "../tools/executor.ts";
import { VERSION } from "../version.ts";

/** Options of `createToolServer`. */
export interface ToolServerOptions {
  /** Told to the client at initialization, e.g. where the workspace is. */
  instructions?: string;
}

/**
 * An MCP server exposing `executor`'s tools. Connect it to a transport with
 * `server.connect(transport)`; closing the tools stays with the caller.
 *
 * @example
 * ```ts
 * const server = createToolServer(executor);
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createToolServer(
  executor: ToolExecutor,
  options: ToolServerOptions = {},
): Server {
  const server = new Server(
    { name: "deft", version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: options.instructions },
  );
  const listed: ListedTool[] = executor.tools.map((tool) => {
    const definition = tool.jsonDefinition("anthropic");
    return {
      name: definition.name,
      description: definition.description,
      inputSchema: definition.parameters as ListedTool["inputSchema"],
    };
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    if (!executor.find(name)) {
      const names = executor.tools.map((t) => t.name).join(", ");
      throw new McpError(
        ErrorCode.InvalidParams,
        `Tool '${name}' not found. Available tools: [${names}]`,
      );
    }
    const result = await executor.executeToolCall({
      name,
      call_id: String(extra.requestId),
      arguments: args ?? {},
    });
    return toCallToolResult(result);
  });
  return server;
}

/** A Deft result as MCP content: output, then error (stderr for bash), in one text block. */
export function toCallToolResult(result: ToolCallResult): CallToolResult {
  const text = [result.output, result.error].filter((part) => part).join("\n");
  // The network destinations decided during the call (host, port, allowed, reason), in `_meta`:
  // the content stays the tool's own text, which the model reads.
  const network = result.record?.network;
  const meta = network ? { _meta: { [NETWORK_META_KEY]: network } } : {};
  if (result.success) return { content: [{ type: "text", text }], ...meta };
  return {
    content: [{
      type: "text",
      text: text || `Tool '${result.name}' failed with error code ${result.error_code}.`,
    }],
    isError: true,
    ...meta,
  };
}

/** The `_meta` key of a result's network decisions. */
export const NETWORK_META_KEY = "deft/network";
