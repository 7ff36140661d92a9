/**
 * `deft mcp`: Deft's tools as an MCP server over stdio, for any MCP client (Claude Desktop,
 * Cursor, Codex, the MCP Inspector). The tools are built once for the connection, so the bash
 * session and the edit history last until the client disconnects; then the tools are closed (no
 * shell or background job outlives the server) and the process exits.
 */
import { endSessionHooks } from "../agent/hook_gate.ts";
import type { SandboxMode } from "../policy/sandbox.ts";
import { createHostedTools } from "../tools/host/mod.ts";
import { servedToolNames } from "../tools/catalog.ts";
import { hostDirs, toolContext } from "./context.ts";
import { writeStderr } from "./io.ts";
import { maxLineBytesOption } from "./line_limit.ts";
import { recordCallNetwork } from "../tools/call_network.ts";
import { networkNote } from "./network_note.ts";

/** Options of `deft mcp`. */
export interface McpCommandOptions {
  workingDir?: string;
  sandbox?: SandboxMode;
  deadline?: string;
  maxLineBytes?: string;
  /** `--approve-asks`: what an ask rule or a hook's ask is about runs, not refused. */
  approveAsks?: boolean;
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Serves until stdin ends (exit code 0) or a signal arrives (128 + its number), then closes the
 * tools. Only protocol messages go to stdout.
 */
export async function mcpCommand(opts: McpCommandOptions): Promise<number> {
  const maxLineBytes = maxLineBytesOption(opts.maxLineBytes);
  const context = await toolContext({ ...opts, provider: "anthropic" });
  // The same tools, confinement and sandbox as `deft tool` and `deft serve`.
  const tools = await createHostedTools(context, servedToolNames(), hostDirs(context.settings));
  // Each answer carries the network decisions of its own call (`_meta`); stderr shows each one.
  const unwatchNetwork = context.settings.network
    ? recordCallNetwork(tools, networkNote("deft mcp"))
    : undefined;
  const { executor, hooks } = await (await import("./hooks.ts")).toolServerExecutor(
    tools,
    context.workspace,
    context.settings,
    "deft mcp",
    opts.approveAsks,
  );
  const [{ createToolServer }, { DenoStdioServerTransport }] = await Promise.all([
    import("../mcp/server.ts"),
    import("../mcp/stdio_server_transport.ts"),
  ]);
  const server = createToolServer(executor, {
    instructions: `Deft's coding tools, confined to the workspace ${context.workspace}. File ` +
      `paths must be absolute and inside it. The bash shell starts there and keeps its state ` +
      `(directory, variables) across calls for this connection.`,
  });

  // stdout belongs to the protocol: a stray console.log from any library would corrupt it.
  const restoreConsole = consoleToStderr();
  let finish!: (code: number) => void;
  const finished = new Promise<number>((resolve) => finish = resolve);
  server.onclose = () => finish(0);
  const signals = Object.entries(SIGNAL_EXIT_CODES).map(([name, code]) => {
    const listener = () => finish(code);
    Deno.addSignalListener(name as Deno.Signal, listener);
    return () => Deno.removeSignalListener(name as Deno.Signal, listener);
  });
  server.onerror = (error) => {
    // A client that left mid-answer is the normal end of a session, not news.
    if (!/broken ?pipe/i.test(String(error))) writeStderr(`deft mcp: ${error.message}`);
  };
  const transport = new DenoStdioServerTransport(undefined, { maxLineBytes });
  // At the end of input, let the calls already sent finish (the client may still read their
  // answers), then close.
  transport.ended.then(() => transport.answered()).then(() => transport.close());

  let code: number | undefined;
  try {
    await server.connect(transport);
    code = await finished;
    return code;
  } finally {
    for (const remove of signals) remove();
    for (const error of await executor.closeTools()) writeStderr(`deft mcp: ${error.message}`);
    // A signal (exit code other than 0) bounds each SessionEnd hook.
    await endSessionHooks(hooks, {
      reason: "other",
      deft: code === 0 ? "connection_closed" : code === undefined ? "error" : "signal",
      signal: code !== undefined && code !== 0,
    });
    await server.close().catch(() => {});
    // After the SessionEnd hooks, whose network decisions stderr shows too.
    unwatchNetwork?.();
    restoreConsole();
  }
}

function consoleToStderr(): () => void {
  const saved = { log: console.log, info: console.info, debug: console.debug };
  console.log = console.info = console.debug = console.error;
  return () => Object.assign(console, saved);
}
