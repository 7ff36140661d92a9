/**
 * `deft acp`: Deft as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
 * Neovim, Emacs) that spawn it. Standard output carries the protocol and nothing else; every
 * diagnostic goes to stderr. Each ACP session is opened the way `deft interactive` opens its
 * session (`openSession`: config and repository trust, sandbox, shell environment, masking, tool
 * host, container flags, trajectory), in the `cwd` the client names (or `-w`); the protocol glue
 * is src/acp. The command ends when the client closes stdin (a running turn is stopped and every
 * tool's process ends) or on SIGINT/SIGTERM.
 */
import { openSession, runTask, type SessionOptions, wantsContainer } from "../agent/session.ts";
import { defaultTrajectoryPath, newSessionId, readTrajectory } from "../trajectory/recorder.ts";
import { listSessions } from "../trajectory/conversation.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { VERSION } from "../version.ts";
import { writeStderr } from "./io.ts";
import { closeContainer, sessionWorkspace } from "./container_session.ts";
import { resumeTarget } from "./resume.ts";
import { workspaceOf } from "./context.ts";
import { onStopSignals } from "./signals.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";
import type { AcpHost } from "../acp/server.ts";
import type { McpServer } from "@agentclientprotocol/sdk";
import type { Session } from "../agent/session.ts";
import type { McpServerConfig } from "../config/schema.ts";

/** Options of `deft acp`. */
export interface AcpOptions extends SessionOptions {
  workingDir?: string;
}

const say = (text: string) => writeStderr(terminalText(maskOutput(text)));

/** Serves ACP on stdin/stdout until the client hangs up; returns the exit code. */
export async function acpCommand(opts: AcpOptions): Promise<number> {
  // The SDK is loaded only by this command.
  const [acp, { deftAgent }] = await Promise.all([
    import("@agentclientprotocol/sdk"),
    import("../acp/server.ts"),
  ]);
  const inContainer = wantsContainer(opts);
  let signalled = false;
  const host: AcpHost = {
    open: async (cwd, io, mcpServers) => {
      // -w, when given, wins over the client's cwd (the editor's project is usually both).
      const workingDir = opts.workingDir ?? cwd;
      const workspace = await sessionWorkspace({ ...opts, workingDir });
      const session = await openSession({ ...opts, workingDir }, {
        workspace,
        console: io.console,
        asking: {
          defaultMode: "commands",
          ask: io.asker.ask,
          // The client answers approvals (session/request_permission).
          terminal: true,
          switchable: true,
        },
        write: io.asker.write,
      });
      try {
        await addClientServers(session, mcpServers);
      } catch (e) {
        await session.executor.closeTools().catch(() => []);
        await closeContainer(session);
        throw e;
      }
      return session;
    },
    close: async (session) => {
      for (const e of await session.executor.closeTools().catch(() => [])) {
        say(`warning: ${e.message}`);
      }
      // Its SessionEnd hooks before its container goes; bounded when a signal ends the command.
      await endSessionHooks(session.hooks, {
        reason: "other",
        deft: signalled ? "signal" : "closed",
        signal: signalled,
      });
      await closeContainer(session);
    },
    runTurn: (session, text, taskOpts) => runTask(session, text, taskOpts),
    load: async (id, cwd) => {
      const workingDir = inContainer ? cwd : opts.workingDir ?? cwd;
      // An ACP session id names its trajectory file; a Deft session id or file works as well.
      let resumed;
      try {
        resumed = await resumeTarget({ resume: defaultTrajectoryPath(id), workingDir });
      } catch {
        resumed = await resumeTarget({ resume: id, workingDir });
      }
      if (!resumed) throw new Error(`no session '${id}'`);
      // A session loaded before goes on where its latest continuation stopped.
      const latest = await latestContinuation(
        resumed.path,
        resumed.trajectory.working_dir ?? cwd,
      );
      if (latest !== resumed.path) resumed = await resumeTarget({ resume: latest, workingDir });
      if (!resumed) throw new Error(`no session '${id}'`);
      return { conversation: resumed.conversation, link: resumed.link };
    },
    list: async (cwd) => {
      const workspace = await workspaceOf(cwd ?? opts.workingDir);
      return (await listSessions(workspace, 50)).map((s) => ({
        sessionId: s.id,
        cwd: s.working_dir ?? workspace,
        title: maskOutput(s.task.split("\n")[0].slice(0, 120)),
        updatedAt: s.started,
      }));
    },
    trajectoryPath: (id) => defaultTrajectoryPath(id),
    newId: () => newSessionId(),
    note: say,
    version: VERSION,
  };
  const { app, closeAll } = deftAgent(host);
  say(`deft acp ${VERSION}: serving the Agent Client Protocol on stdio`);
  const connection = app.connect(acp.ndJsonStream(Deno.stdout.writable, Deno.stdin.readable));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await closeAll();
  };
  const keepSignals = onStopSignals((_name, code) => {
    signalled = true;
    void stop().finally(() => Deno.exit(code));
  });
  try {
    await connection.closed.catch((e) => say(`connection closed: ${(e as Error).message}`));
  } finally {
    await stop();
    keepSignals();
  }
  return 0;
}

/**
 * The newest trajectory that continues `path` (through `resumed_from`, one after another), among
 * the workspace's recent sessions; `path` itself when none does.
 */
async function latestContinuation(path: string, workspace: string): Promise<string> {
  const next = new Map<string, string>();
  for (const session of await listSessions(workspace, 100)) {
    try {
      const from = (await readTrajectory(session.path)).resumed_from?.path;
      // Newest first: the first continuation seen is the latest.
      if (from && !next.has(from)) next.set(from, session.path);
    } catch { /* an unreadable file continues nothing */ }
  }
  const seen = new Set<string>();
  let latest = path;
  while (next.has(latest) && !seen.has(latest)) {
    seen.add(latest);
    latest = next.get(latest)!;
  }
  return latest;
}

/**
 * Starts the MCP servers the client passed (stdio; the editor's user configured them) the way
 * the config's start (src/mcp/discover.ts, their processes from the policy), and adds their
 * tools to the session's. Their calls are asked about like any tool Deft does not know. In a
 * container they are not started, as the config's are not.
 */
async function addClientServers(session: Session, servers: readonly McpServer[]): Promise<void> {
  if (servers.length === 0) return;
  if (session.container) {
    session.console.note("warning: the client's MCP servers are not started in a container");
    return;
  }
  const configs: Record<string, McpServerConfig> = {};
  for (const server of servers) {
    if (!("command" in server) || ("type" in server && server.type !== "stdio")) {
      session.console.note(
        `warning: MCP server '${server.name}' is not a stdio server; Deft starts only those`,
      );
      continue;
    }
    configs[server.name] = {
      command: server.command,
      args: server.args,
      env: Object.fromEntries(server.env.map((v) => [v.name, v.value])),
    };
  }
  const names = Object.keys(configs);
  if (names.length === 0) return;
  const { discoverMcpTools } = await import("../mcp/discover.ts");
  session.console.note(`starting the client's MCP servers: ${names.join(", ")}`);
  const { config, workspace } = session;
  const mcp = await discoverMcpTools(
    { mcp_servers: configs, allow_mcp_servers: names },
    { provider: config.model.provider.provider, workspace, settings: config.toolSettings },
    { annotationsTrusted: true },
  );
  for (const error of mcp.errors) session.console.note(`warning: ${error}`);
  session.executor.addTools(mcp.tools);
}
