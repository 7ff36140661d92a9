/**
 * `deft acp`: Deft as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
 * Neovim, Emacs) that spawn it. Standard output carries the protocol and nothing else; every
 * diagnostic goes to stderr. Each ACP session is opened the way `deft interactive` opens its
 * session (`openSession`: config and repository trust, sandbox, shell environment, masking, tool
 * host, container flags, trajectory), in the `cwd` the client names (or `-w`); the protocol glue
 * is src/acp. The command ends when the client closes stdin (a running turn is stopped and every
 * tool's process ends) or on SIGINT/SIGTERM.
 */
import { resolve } from "node:path";
import { openSession, runTask, type SessionOptions } from "../agent/session.ts";
import { wantsContainer } from "../agent/workplace.ts";
import {
  defaultTrajectoryPath,
  newSessionId,
  readTrajectory,
  stateDir,
} from "../trajectory/recorder.ts";
import { listSessions } from "../trajectory/conversation.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { VERSION } from "../version.ts";
import { writeStderr } from "./io.ts";
import { closeWorkplace, sessionWorkspace } from "./session_place.ts";
import { resumeTarget } from "./resume.ts";
import { workspaceOf } from "./context.ts";
import { onStopSignals } from "./signals.ts";
import { endSessionHooks } from "../agent/hook_gate.ts";
import type { AcpHost } from "../acp/server.ts";
import type { McpServer } from "@agentclientprotocol/sdk";
import type { Session } from "../agent/session.ts";
import type { McpServerConfig } from "../config/schema.ts";
import { loadConfig, type LoadedConfig } from "../config/load.ts";
import type { ResolvedModel } from "../config/resolve.ts";
import { runSlashCommand, slashCommands } from "./interactive/commands.ts";

/** Options of `deft acp`. */
export interface AcpOptions extends SessionOptions {
  workingDir?: string;
}

const say = (text: string) => writeStderr(terminalText(maskOutput(text)));

/** Serves ACP on stdin/stdout until the client hangs up; returns the exit code. */
export async function acpCommand(opts: AcpOptions): Promise<number> {
  // The SDK is loaded only by this command.
  const [, { acpStream, deftAgent }, { modelChoices, resolveChoice, switchModel }] = await Promise
    .all([
      import("@agentclientprotocol/sdk"),
      import("../acp/server.ts"),
      import("../acp/model.ts"),
    ]);
  const inContainer = wantsContainer(opts);
  let signalled = false;
  // Each session's configuration as it was loaded and the model it started with (the models
  // it may switch to).
  const configs = new WeakMap<Session, LoadedConfig>();
  const firstModels = new WeakMap<Session, ResolvedModel>();
  const firstModel = (session: Session) => firstModels.get(session) ?? session.config.model;
  // The folder each session was opened for: its project config is read there.
  const folders = new WeakMap<Session, string>();
  const configOf = async (session: Session) => {
    let loaded = configs.get(session);
    if (!loaded) {
      const folder = folders.get(session);
      configs.set(session, loaded = await loadConfig(opts.configFile, { folder }));
    }
    return loaded;
  };
  const host: AcpHost = {
    open: async (cwd, io, mcpServers) => {
      // -w, when given, wins over the client's cwd (the editor's project is usually both).
      const workingDir = opts.workingDir ?? cwd;
      const workspace = await sessionWorkspace({ ...opts, workingDir });
      // The session's folder, not where the editor started Deft, holds its project config.
      const configFolder = resolve(workingDir);
      const session = await openSession({ ...opts, workingDir, configFolder }, {
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
        // Each trajectory's id is the ACP session's own (`newId`).
        namesSessions: true,
      });
      try {
        await addClientServers(session, mcpServers);
      } catch (e) {
        await session.executor.closeTools().catch(() => []);
        await closeWorkplace(session);
        throw e;
      }
      folders.set(session, configFolder);
      return session;
    },
    opened: (id, workspace) => noteOpened(id, workspace),
    commands: slashCommands(),
    runCommand: async (line, ctx) => {
      await runSlashCommand(line, ctx);
    },
    models: async (session) => modelChoices(await configOf(session), firstModel(session)),
    setModel: async (session, value) => {
      const model = resolveChoice(await configOf(session), value, firstModel(session), opts);
      firstModels.set(session, firstModel(session));
      switchModel(session, model);
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
      }, session);
      await closeWorkplace(session);
    },
    runTurn: (session, text, taskOpts) => runTask(session, text, taskOpts),
    load: async (id, cwd) => {
      const workingDir = inContainer ? cwd : opts.workingDir ?? cwd;
      // An ACP session id names its trajectory file; a Deft session id or file works as well.
      let resumed;
      try {
        resumed = await resumeTarget({ resume: defaultTrajectoryPath(id), workingDir });
      } catch (e) {
        try {
          resumed = await resumeTarget({ resume: id, workingDir });
        } catch {
          // A session opened but never prompted has no trajectory yet: it starts empty.
          if (await openedIn(id, inContainer ? cwd : await workspaceOf(workingDir))) {
            return { conversation: [] };
          }
          throw e;
        }
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
  const connection = app.connect(acpStream(Deno.stdout.writable, Deno.stdin.readable));
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

/** Where a session opened over ACP is noted until its first turn records a trajectory. */
function openedNote(id: string): string | undefined {
  // The id comes from the client: only Deft's own ids name a file.
  return /^[0-9]{8}_[0-9]{6}_[0-9a-f]{6}$/.test(id)
    ? `${stateDir()}/acp_sessions/${id}.json`
    : undefined;
}

async function noteOpened(id: string, workspace: string): Promise<void> {
  const path = openedNote(id);
  if (!path) return;
  await Deno.mkdir(`${stateDir()}/acp_sessions`, { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(path, JSON.stringify({ workspace }) + "\n", { mode: 0o600 });
}

/**
 * Whether session `id` was opened over ACP in `workspace`; one opened elsewhere is an error
 * naming its workspace.
 */
async function openedIn(id: string, workspace: string): Promise<boolean> {
  const path = openedNote(id);
  if (!path) return false;
  let noted: unknown;
  try {
    noted = JSON.parse(await Deno.readTextFile(path))?.workspace;
  } catch {
    return false;
  }
  if (noted === workspace) return true;
  throw new Error(`session '${id}' was opened in ${String(noted)}, not in ${workspace}`);
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
  if (session.workplace.mcpRefusal) {
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
