/**
 * Starts the MCP servers the configuration allows and turns their tools into Deft tools. Servers
 * that fail to start are reported once, in `errors`, and contribute no tools; the rest of the
 * agent goes on without them. A stdio server runs in the session's sandbox (its `ProcessPolicy`,
 * from the tool settings) unless its entry says `sandbox: none`; with a network list, the
 * session's proxy is started first, so a sandboxed server reaches the hosts the list allows.
 */
import type { McpServerConfig } from "../config/schema.ts";
import type { ToolContext, ToolSettings } from "../tools/base.ts";
import { mcpServerSandbox, type ProcessPolicy, processPolicy } from "../policy/process.ts";
import { McpConnection, McpStartError } from "./client.ts";
import { mcpToolName } from "./names.ts";
import { McpTool } from "./tool.ts";

/** The part of Deft's configuration that names MCP servers. */
export interface McpConfig {
  mcp_servers: Record<string, McpServerConfig>;
  allow_mcp_servers: readonly string[];
}

/** Options of `discoverMcpTools`. */
export interface DiscoverOptions {
  /** Receives what stdio servers write to stderr (default: kept only for error messages). */
  onStderr?: (server: string, text: string) => void;
  /** Least seconds a server's start may take, whatever its `timeout` (default 30). */
  minStartupSeconds?: number;
  /** The servers come from the user's own config: their `readOnlyHint`s count (client.ts). */
  annotationsTrusted?: boolean;
}

/** The tools found, the servers that failed, and a way to stop every server. */
export interface DiscoveredMcpTools {
  /** One `McpTool` per remote tool, servers in `allow_mcp_servers` order. */
  tools: McpTool[];
  /** One message per server that could not be used, e.g. `MCP server 'db' exited with code 1 ...`. */
  errors: string[];
  /** Stops every server that was started. Closing an `McpTool` stops its own server. */
  close(): Promise<void>;
}

/**
 * Starts every server named in `allow_mcp_servers` (in parallel; others are never started), lists
 * their tools and wraps each as an `McpTool` built with `context`.
 *
 * @example
 * ```ts
 * const mcp = await discoverMcpTools(config, context);
 * for (const error of mcp.errors) console.error(error);
 * const executor = new ToolExecutor([...builtInTools, ...mcp.tools]);
 * // ... run the agent ...
 * await executor.closeTools(); // also stops the MCP servers
 * ```
 */
export async function discoverMcpTools(
  config: McpConfig,
  context: ToolContext,
  options: DiscoverOptions = {},
): Promise<DiscoveredMcpTools> {
  const errors: string[] = [];
  const connections: McpConnection[] = [];
  const starts = [...new Set(config.allow_mcp_servers)].map((name) => config.mcp_servers[name]);
  const policy = await serverPolicy(context, starts.filter((s) => s?.command && !s.url));
  for (const name of new Set(config.allow_mcp_servers)) {
    const server = config.mcp_servers[name];
    const problem = server === undefined
      ? "is listed in allow_mcp_servers but not defined under mcp_servers"
      : server.command && server.url
      ? "has both 'command' and 'url'; give 'command' for a stdio server or 'url' for HTTP"
      : !server.command && !server.url
      ? "has neither 'command' (stdio) nor 'url' (streamable HTTP)"
      : undefined;
    if (problem) {
      errors.push(`MCP server '${name}' ${problem}; it was not started.`);
      continue;
    }
    connections.push(
      new McpConnection(name, server, { ...options, workspace: context.workspace, policy }),
    );
  }

  const listings = await Promise.allSettled(connections.map((c) => c.listTools()));
  const tools: McpTool[] = [];
  const taken = new Set<string>();
  listings.forEach((listing, i) => {
    const connection = connections[i];
    if (listing.status === "rejected") {
      const reason = listing.reason;
      errors.push(
        reason instanceof McpStartError
          ? reason.message
          : `MCP server '${connection.name}' failed to start: ${String(reason)}`,
      );
      return;
    }
    for (const remote of listing.value) {
      if (remote.execution?.taskSupport === "required") {
        errors.push(
          `Tool '${remote.name}' of MCP server '${connection.name}' can only run as a task, ` +
            `which Deft does not support; it was left out.`,
        );
        continue;
      }
      const name = mcpToolName(connection.name, remote.name, taken);
      tools.push(new McpTool(context, connection, remote, name));
    }
  });
  return {
    tools,
    errors,
    close: async () => {
      await Promise.all(connections.map((c) => c.close()));
    },
  };
}

/**
 * The policy stdio servers are started under: the session's sandbox, network and helpers. With
 * a network list and a server that runs sandboxed, this process's proxy for the list is started
 * and its socket recorded in the settings, as the tools' hosts do (tools/host). Nothing runs
 * sandboxed when no stdio server is started: the default sandbox is not even probed.
 */
async function serverPolicy(
  context: ToolContext,
  stdio: readonly McpServerConfig[],
): Promise<ProcessPolicy | undefined> {
  if (stdio.length === 0) return undefined;
  const settings: ToolSettings = context.settings;
  const sandbox = settings.sandbox ?? "none";
  const sandboxed = stdio.some((s) => mcpServerSandbox(sandbox, s.sandbox) !== "none");
  if (sandboxed && settings.network && !settings.allowNetwork && !settings.networkProxy) {
    const { ensureNetworkProxy } = await import("../policy/network/mod.ts");
    settings.networkProxy = (await ensureNetworkProxy(settings.network)).socketPath;
  }
  return processPolicy(context.workspace, { ...settings, sandbox, networkForwarded: false });
}
