/** `deft tools`: the registered tools, as a table or as provider definitions in JSON. */
import { isProvider, PROVIDERS } from "../config/providers.ts";
import { createTools, DEFAULT_TOOL_NAMES, registeredToolNames } from "../tools/registry.ts";
import { toolContext } from "./context.ts";
import { configCandidates } from "../config/locate.ts";
import { readConfigFile } from "../config/read.ts";
import { UsageError, warnStderr, writeStdout } from "./io.ts";
import type { Tool, ToolContext } from "../tools/base.ts";

/** Options of `deft tools`. */
export interface ToolsOptions {
  provider?: string;
  json?: boolean;
  configFile?: string;
}

/** Prints the tool list; returns the exit code. */
export async function toolsCommand(opts: ToolsOptions): Promise<number> {
  const provider = opts.provider ?? "openai";
  if (!isProvider(provider)) {
    throw new UsageError(`unknown provider '${provider}'. Known: ${PROVIDERS.join(", ")}.`);
  }
  // No tool runs, so none needs the sandbox: it is not checked (nor decided, nor probed).
  const context = await toolContext({ provider }, []);
  // Listing calls no tool, so no tool host is made: the stand-ins carry the definitions.
  const tools: Tool[] = createTools(context, registeredToolNames());
  const mcp = await mcpTools(context, opts.configFile);
  tools.push(...mcp.tools);
  try {
    return await print(tools, opts.json ?? false);
  } finally {
    await mcp.close();
  }
}

async function print(tools: Tool[], json: boolean): Promise<number> {
  if (json) {
    await writeStdout(JSON.stringify(tools.map((t) => t.jsonDefinition()), null, 2) + "\n");
    return 0;
  }
  const width = Math.max(...tools.map((t) => t.name.length));
  const lines = tools.map((t) => {
    const summary = t.description.split("\n")[0].replace(/(?<=\.) .*$/, "");
    const server = (t as { serverName?: string }).serverName;
    const optIn = server
      ? ` (MCP server ${server})`
      : DEFAULT_TOOL_NAMES.includes(t.name)
      ? ""
      : " (opt-in)";
    return `${t.name.padEnd(width)}  ${summary}${optIn}`;
  });
  await writeStdout(lines.join("\n") + "\n");
  return 0;
}

/**
 * The tools of the MCP servers the configuration allows. Reading the configuration costs
 * start-up time, so it is parsed only when a config file exists and mentions allowed servers.
 */
async function mcpTools(context: ToolContext, configFile?: string) {
  const none = { tools: [] as Tool[], close: () => Promise.resolve() };
  const found = configCandidates(configFile).find((c) => {
    try {
      return c.explicit || Deno.statSync(c.path).isFile;
    } catch {
      return false;
    }
  });
  if (!found) return none;
  let text = "";
  try {
    text = await readConfigFile(found.path);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (!found.explicit) return none;
  }
  if (!found.explicit && !/allow_mcp_servers:\s*(\[\s*[^\]\s]|\n\s*-)/.test(text)) return none;
  const { loadConfig } = await import("../config/load.ts");
  // The same search as `deft run`: a repository's own file stays untrusted (not loaded by name).
  const { config, warnings } = await loadConfig(configFile);
  // Without --config this is the file toolContext has loaded, and warned about, already.
  if (configFile !== undefined) {
    for (const warning of warnings) {
      warnStderr(`warning: ${warning}`);
    }
  }
  if (config.allow_mcp_servers.length === 0) return none;
  const { discoverMcpTools } = await import("../mcp/discover.ts");
  const mcp = await discoverMcpTools(config, context);
  for (const error of mcp.errors) warnStderr(`warning: ${error}`);
  return mcp;
}
