/**
 * `deft acp`'s protocol side: an Agent Client Protocol agent on the official SDK
 * (`@agentclientprotocol/sdk`), newline-delimited JSON-RPC over a pair of streams. Each ACP session
 * is a Deft session opened by the command (the same assembly as `deft interactive`: sandbox,
 * shell environment, masking, repository trust, tool host, trajectory); a prompt is one turn of
 * its conversation, run by `runTask`. Only protocol glue lives here: the loop is src/agent's.
 */
import * as acp from "@agentclientprotocol/sdk";
import { type AgentResult } from "../agent/agent.ts";
import { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from "../gate/modes.ts";
import type { Session, TaskOptions } from "../agent/session.ts";
import type { LLMMessage, LLMToolCall } from "../llm/types.ts";
import type { Trajectory, TrajectoryRecorder } from "../trajectory/recorder.ts";
import { AcpConsole, type Update } from "./console.ts";
import { isPermissionAnswer, type PermissionAnswer, PermissionAsker } from "./permission.ts";
import { type ClientFs, ClientFsEditor } from "./client_fs.ts";
import { normalizeToolName } from "../tools/executor.ts";
import { maskOutput } from "../policy/secrets.ts";
import { effectsOf } from "../tools/catalog.ts";
import { replayUpdates } from "./replay.ts";
import { checkedCwd, modelParams, openError, promptText, usedTokens } from "./requests.ts";
import {
  type AcpCommandContext,
  commandIn,
  type CommandInfo,
  commandsUpdate,
  commandText,
} from "./commands.ts";
import type { ModelChoice } from "./model.ts";
import { configOptions, MODE_OPTION, MODEL_OPTION, modeState } from "./session_options.ts";

// The connection's stream (over-size messages are answered, not fatal); the command builds it.
export { acpStream } from "./stream.ts";
export { replayUpdates } from "./replay.ts";
export { promptText } from "./requests.ts";

/** What the session's side of a Deft session needs from ACP. */
export interface AcpSessionIO {
  console: AcpConsole;
  asker: PermissionAsker;
}

/**
 * A conversation to go on with (`session/load`); without `link`, a session that was opened but
 * never prompted: it goes on as itself, its first turn recording its trajectory.
 */
export interface LoadedConversation {
  conversation: LLMMessage[];
  link?: NonNullable<Trajectory["resumed_from"]>;
}

/** What the command provides: how sessions open and close, and how a turn runs. */
export interface AcpHost {
  /**
   * Opens a Deft session in `cwd` (absolute) with the ACP console and asker; the client's MCP
   * servers (stdio) start beside the config's.
   */
  open(cwd: string, io: AcpSessionIO, mcpServers: readonly acp.McpServer[]): Promise<Session>;
  /** Closes the session's tools (their processes end) and its container. */
  close(session: Session): Promise<void>;
  /** Runs one turn (src/agent/session.ts `runTask`). */
  runTurn(
    session: Session,
    text: string,
    opts: TaskOptions,
  ): Promise<{ result: AgentResult; recorder: TrajectoryRecorder }>;
  /** The conversation of Deft's session `id` in `cwd`, for `session/load`. */
  load(id: string, cwd: string): Promise<LoadedConversation>;
  /** Deft's recent sessions in `cwd` (absolute; undefined: the command's workspace). */
  list(cwd: string | undefined): Promise<acp.SessionInfo[]>;
  /** Notes that session `id` was opened in `cwd`, so it can be loaded before its first turn. */
  opened(id: string, cwd: string): Promise<void>;
  /** The slash commands of `deft interactive`, described (commands.ts offers some). */
  commands: readonly CommandInfo[];
  /** Runs the slash command `line` (`deft interactive`'s) on the session `ctx` reaches. */
  runCommand(line: string, ctx: AcpCommandContext): Promise<void>;
  /** The models the session may switch to, its own first (model.ts). */
  models(session: Session): Promise<ModelChoice[]>;
  /** Switches the session to model `value`; throws an Error saying what to pick instead. */
  setModel(session: Session, value: unknown): Promise<void>;
  /** Where a new session's trajectory goes, named by its ACP session id. */
  trajectoryPath(sessionId: string): string;
  /** A new session id (Deft's format). */
  newId(): string;
  /** Writes one line of diagnostics to stderr. */
  note(text: string): void;
  version: string;
}

/** One ACP session. */
interface Live {
  id: string;
  session: Session;
  console: AcpConsole;
  conversation: LLMMessage[];
  recorder?: TrajectoryRecorder;
  link?: LoadedConversation["link"];
  trajectoryFile: string;
  /** The trajectory's `session_id`: the ACP session id, or a new one for a loaded session. */
  trajectoryId: string;
  /** The running turn, if any. */
  turn?: AbortController;
  /** The client of the running prompt (updates and questions go there). */
  client?: acp.AgentContext;
  /** Updates in the order they were made. */
  sent: Promise<void>;
  /** The editor through the client's file system, when the client offers one. */
  clientEditor?: ClientFsEditor;
  /** Turns run and tokens used, for /status. */
  turns: number;
  tokens: number;
  /** The model option's value (model.ts). */
  model: string;
}

/** The client's file system as a session reaches it: through the running prompt's client. */
function clientFs(live: Live): ClientFs | undefined {
  const client = live.client;
  if (!client) return undefined;
  return {
    read: async (path) =>
      (await client.request(acp.methods.client.fs.readTextFile, { sessionId: live.id, path }))
        .content,
    write: async (path, content) => {
      await client.request(acp.methods.client.fs.writeTextFile, {
        sessionId: live.id,
        path,
        content,
      });
    },
    // As a cancel does: the shell and everything it started end; the next command starts anew.
    stopShells: async () => await live.session.executor.find("bash")?.close(),
  };
}

/**
 * The session's editor replaced by one that reads and writes through the client (see
 * client_fs.ts); not in a container, whose files are not the editor's. Only the tool changes:
 * its calls pass the session's gates (hooks, rules, the approval mode) as before.
 */
function useClientFs(live: Live): void {
  const { session } = live;
  if (session.container) return;
  const editor = session.executor.find("str_replace_based_edit_tool");
  if (!editor) return;
  const wrapped = new ClientFsEditor(editor, () => clientFs(live));
  live.clientEditor = wrapped;
  session.executor.replaceTool(editor.name, wrapped);
}

/** Builds the agent app; `connect` it to a stream. */
export function deftAgent(host: AcpHost): { app: acp.AgentApp; closeAll(): Promise<void> } {
  const sessions = new Map<string, Live>();
  /** What the client said it offers (initialize). */
  let clientCaps: acp.ClientCapabilities | undefined;

  const send = (live: Live, update: Update) => {
    const client = live.client;
    if (!client) return;
    live.sent = live.sent.then(() =>
      client.notify(acp.methods.client.session.update, {
        sessionId: live.id,
        update: update as acp.SessionUpdate,
      }).catch((e) => host.note(`could not send a session update: ${(e as Error).message}`))
    );
  };

  const ask = async (
    live: Live,
    toolCall: Record<string, unknown>,
    always: boolean,
  ): Promise<PermissionAnswer | null> => {
    const client = live.client;
    const signal = live.turn?.signal;
    if (!client || !signal || signal.aborted) return null;
    await live.sent;
    const options = [
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      ...(always ? [{ optionId: "allow_always", name: "Always allow", kind: "allow_always" }] : []),
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      { optionId: "reject_always", name: "Always reject", kind: "reject_always" },
    ] as acp.PermissionOption[];
    const aborted = new Promise<null>((resolve) => {
      signal.addEventListener("abort", () => resolve(null), { once: true });
    });
    try {
      const answer = await Promise.race([
        client.request(acp.methods.client.session.requestPermission, {
          sessionId: live.id,
          toolCall: toolCall as acp.ToolCallUpdate,
          options,
        }, { cancellationSignal: signal, stopWaitingOnCancel: true }),
        aborted,
      ]);
      if (!answer || answer.outcome.outcome !== "selected") return null;
      const id = answer.outcome.optionId;
      // Any of Deft's answers counts, offered or not: "allow always" where no "always" was
      // offered allows this call once (permission.ts), it is not "no answer".
      return isPermissionAnswer(id) ? id : null;
    } catch (e) {
      if (!signal.aborted) host.note(`permission request failed: ${(e as Error).message}`);
      return null;
    }
  };

  const openLive = async (
    cwd: string,
    id: string,
    mcpServers: readonly acp.McpServer[],
  ): Promise<Live> => {
    // The console and the asker need the session record; it is filled in below.
    const live = { id, sent: Promise.resolve() } as Live;
    const console = new AcpConsole({
      send: (update) => send(live, update),
      effects: (call: LLMToolCall) => {
        const args = (call.arguments ?? {}) as Record<string, unknown>;
        const tool = live.session?.executor.find(call.name);
        return tool ? tool.effects(args) : effectsOf(normalizeToolName(call.name), args);
      },
      workspace: () => live.session?.workspace ?? cwd,
      // In a container the files are not the host's: no diffs are read here.
      hostFiles: () => !live.session?.container,
      note: host.note,
      clientEdit: (path) => live.clientEditor?.takeEdit(path),
    });
    const asker = new PermissionAsker({
      console,
      request: (toolCall, always) => ask(live, toolCall, always),
      bufferText: (path) => live.clientEditor?.bufferText(path) ?? Promise.resolve(undefined),
      note: host.note,
    });
    try {
      live.session = await host.open(cwd, { console, asker }, mcpServers);
    } catch (e) {
      throw openError(e);
    }
    live.console = console;
    if (clientCaps?.fs?.readTextFile && clientCaps.fs.writeTextFile) useClientFs(live);
    live.conversation = [];
    live.trajectoryId = id;
    live.trajectoryFile = host.trajectoryPath(id);
    live.turns = 0;
    live.tokens = 0;
    live.model = live.session.config.model.name;
    sessions.set(id, live);
    return live;
  };

  /** The session's modes and config options, as session/new and session/load answer them. */
  const settings = async (live: Live) => ({
    modes: modeState(modeOf(live)),
    configOptions: configOptions(modeOf(live), live.model, await host.models(live.session)),
  });

  const setMode = (live: Live, modeId: unknown) => {
    if (!isApprovalMode(modeId)) {
      throw acp.RequestError.invalidParams(
        { modeId },
        `unknown mode '${modeId}': use one of ${APPROVAL_MODES.join(", ")}`,
      );
    }
    if (!live.session.approval) {
      throw acp.RequestError.invalidRequest(
        undefined,
        "this session has no approval gate (a replay): its mode cannot change",
      );
    }
    live.session.approval.mode = modeId;
  };

  const setModel = async (live: Live, value: unknown) => {
    try {
      await host.setModel(live.session, value);
    } catch (e) {
      throw acp.RequestError.invalidParams({ value }, maskOutput((e as Error).message));
    }
    live.model = String(value);
  };

  /** What `deft interactive`'s slash commands read and change, here the ACP session's. */
  const commandContext = (live: Live, signal: AbortSignal): AcpCommandContext => ({
    session: live.session,
    get conversation() {
      return live.conversation;
    },
    set conversation(conversation) {
      live.conversation = conversation;
    },
    get recorder() {
      return live.recorder;
    },
    get turns() {
      return live.turns;
    },
    get tokens() {
      return live.tokens;
    },
    reset: (from) => {
      live.conversation = from?.conversation ?? [];
      live.recorder = undefined;
      live.link = from?.link;
      // The next turn records a new trajectory; the one before stays as it was.
      live.trajectoryId = host.newId();
      live.trajectoryFile = host.trajectoryPath(live.trajectoryId);
    },
    write: (text) =>
      send(live, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: commandText(maskOutput(text)) },
      }),
    asTurn: async (work) => {
      try {
        return await work(signal);
      } catch (e) {
        if (signal.aborted) return undefined;
        throw e;
      }
    },
  });

  /** A prompt that is a slash command: run (or refused), never sent to the model. */
  const runCommand = async (live: Live, kind: { command: string } | { refused: string }) => {
    const signal = live.turn!.signal;
    if ("refused" in kind) {
      send(live, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: kind.refused },
      });
    } else {
      try {
        await host.runCommand(kind.command, commandContext(live, signal));
      } catch (e) {
        if (!signal.aborted) {
          throw acp.RequestError.internalError(
            undefined,
            `${kind.command.split(/\s/)[0]} failed: ${maskOutput((e as Error).message)}`,
          );
        }
      }
    }
    return { stopReason: signal.aborted ? "cancelled" as const : "end_turn" as const };
  };

  const liveOf = (sessionId: string): Live => {
    const live = sessions.get(sessionId);
    if (!live) {
      throw acp.RequestError.invalidParams(
        { sessionId },
        `unknown session '${sessionId}': open one with session/new (or session/load) first`,
      );
    }
    return live;
  };

  const modeOf = (live: Live): ApprovalMode => live.session.approval?.mode ?? "never";

  const app = acp.agent({ name: "deft" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCaps = params.clientCapabilities;
      return {
        protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: false, audio: false, embeddedContext: true },
          mcpCapabilities: { http: false, sse: false },
          sessionCapabilities: { list: {} },
        },
        agentInfo: { name: "deft", title: "Deft", version: host.version },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      const cwd = checkedCwd(params.cwd);
      const live = await openLive(cwd, host.newId(), params.mcpServers ?? []);
      await host.opened(live.id, live.session.workspace)
        .catch((e) => host.note(`could not note the new session: ${(e as Error).message}`));
      // The commands are the session's once the client knows its id: after this answer.
      setTimeout(() => {
        client.notify(acp.methods.client.session.update, {
          sessionId: live.id,
          update: commandsUpdate(host.commands),
        }).catch((e) => host.note(`could not send the commands: ${(e as Error).message}`));
      }, 0);
      return { sessionId: live.id, ...await settings(live) };
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const cwd = checkedCwd(params.cwd);
      if (sessions.has(params.sessionId)) {
        throw acp.RequestError.invalidParams(
          { sessionId: params.sessionId },
          `session '${params.sessionId}' is already open`,
        );
      }
      let loaded: LoadedConversation;
      try {
        loaded = await host.load(params.sessionId, cwd);
      } catch (e) {
        throw acp.RequestError.invalidParams(
          { sessionId: params.sessionId },
          e instanceof Error ? e.message : String(e),
        );
      }
      const live = await openLive(cwd, params.sessionId, params.mcpServers ?? []);
      live.conversation = loaded.conversation;
      live.link = loaded.link;
      // The loaded session's file stays as it is: the next turns go to a new trajectory that
      // names it (`resumed_from`), as `deft run --resume` does. A session never prompted has
      // no file yet: its first turn records it under its own id.
      if (loaded.link) {
        live.trajectoryId = host.newId();
        live.trajectoryFile = host.trajectoryPath(live.trajectoryId);
      }
      live.client = client;
      for (const update of replayUpdates(loaded.conversation)) send(live, update);
      send(live, commandsUpdate(host.commands));
      await live.sent;
      live.client = undefined;
      return await settings(live);
    })
    .onRequest(acp.methods.agent.session.list, async ({ params }) => {
      const cwd = params.cwd == null ? undefined : checkedCwd(params.cwd);
      try {
        return { sessions: await host.list(cwd) };
      } catch (e) {
        throw openError(e);
      }
    })
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
      setMode(liveOf(params.sessionId), params.modeId);
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const live = liveOf(params.sessionId);
      if (params.configId === MODE_OPTION) setMode(live, params.value);
      else if (params.configId === MODEL_OPTION) await setModel(live, params.value);
      else {
        throw acp.RequestError.invalidParams(
          { configId: params.configId },
          `unknown config option '${params.configId}': Deft's are ${MODE_OPTION}, ${MODEL_OPTION}`,
        );
      }
      return { configOptions: (await settings(live)).configOptions };
    })
    // The model as clients before config options set it (`session/set_model`).
    .onRequest("session/set_model", modelParams, async ({ params }) => {
      await setModel(liveOf(params.sessionId), params.modelId);
      return {};
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const live = liveOf(params.sessionId);
      if (live.turn) {
        throw acp.RequestError.invalidRequest(
          { sessionId: live.id },
          "a prompt is already running in this session: wait for it, or send session/cancel",
        );
      }
      const text = promptText(params.prompt);
      const turn = new AbortController();
      live.turn = turn;
      live.client = client;
      live.console.beginTurn();
      try {
        const command = commandIn(text, host.commands);
        if (command) return await runCommand(live, command);
        let result: AgentResult;
        try {
          const ran = await host.runTurn(live.session, text, {
            signal: turn.signal,
            conversation: live.conversation,
            recorder: live.recorder,
            resumedFrom: live.link,
            textEndsTurn: true,
            trajectoryFile: live.trajectoryFile,
            sessionId: live.trajectoryId,
          });
          live.tokens += usedTokens(ran.recorder) - usedTokens(live.recorder);
          live.turns++;
          live.recorder = ran.recorder;
          result = ran.result;
        } catch (e) {
          if (turn.signal.aborted) return { stopReason: "cancelled" as const };
          throw acp.RequestError.internalError(
            undefined,
            `the turn failed: ${maskOutput(e instanceof Error ? e.message : String(e))}`,
          );
        }
        if (turn.signal.aborted || result.interrupted) return { stopReason: "cancelled" as const };
        // A final answer not streamed (task_done's result, a client that does not stream) is
        // sent as the agent's message.
        const answer = result.finalResult;
        if (answer && !live.console.streamed.includes(answer.trim())) {
          send(live, {
            sessionUpdate: "agent_message_chunk",
            content: { type: "text", text: maskOutput(answer) },
          });
        }
        // How full the model's context is, where the configuration says how large it is.
        const size = live.session.config.model.settings.context_window;
        const usage = live.recorder?.data.agent_steps.at(-1)?.llm_response?.usage;
        if (size && usage) {
          send(live, {
            sessionUpdate: "usage_update",
            used: usage.input_tokens + usage.output_tokens,
            size,
          });
        }
        const stopReason = !result.success &&
            result.steps >= live.session.config.agent.max_steps
          ? "max_turn_requests" as const
          : "end_turn" as const;
        return { stopReason };
      } finally {
        await live.sent;
        live.turn = undefined;
        live.client = undefined;
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const live = sessions.get(params.sessionId);
      // A cancel for nothing (no such session, no running turn) is no error: nothing to stop.
      if (!live?.turn) return;
      cancelTurn(live);
    });

  const cancelTurn = (live: Live) => {
    live.turn?.abort(new Error("cancelled by the client"));
    // As Ctrl-C in `deft interactive`: killing the shell ends a running command now; the next
    // command gets a fresh shell.
    void live.session.executor.find("bash")?.close();
  };

  const closeAll = async () => {
    const all = [...sessions.values()];
    sessions.clear();
    for (const live of all) if (live.turn) cancelTurn(live);
    await Promise.all(all.map((live) => host.close(live.session).catch(() => {})));
  };

  return { app, closeAll };
}
