/**
 * `deft acp`'s protocol side: an Agent Client Protocol agent on the official SDK
 * (`@agentclientprotocol/sdk`), newline-delimited JSON-RPC over a pair of streams. Each ACP session
 * is a Deft session opened by the command (the same assembly as `deft interactive`: sandbox,
 * shell environment, masking, repository trust, tool host, trajectory); a prompt is one turn of
 * its conversation, run by `runTask`. Only protocol glue lives here: the loop is src/agent's.
 */
import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { type AgentResult } from "../agent/agent.ts";
import { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from "../agent/approval.ts";
import type { Session, TaskOptions } from "../agent/session.ts";
import type { LLMMessage } from "../llm/types.ts";
import type { TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import { AcpConsole, toolKind, toolTitle, type Update } from "./console.ts";
import type { CallEffect } from "../tools/base.ts";
import { type PermissionAnswer, PermissionAsker } from "./permission.ts";
import { type ClientFs, ClientFsEditor } from "./client_fs.ts";
import { maskOutput } from "../policy/secrets.ts";
import { effectsOf } from "../tools/catalog.ts";
import { normalizeToolName } from "../tools/executor.ts";
import type { LLMToolCall } from "../llm/types.ts";

/** What the session's side of a Deft session needs from ACP. */
export interface AcpSessionIO {
  console: AcpConsole;
  asker: PermissionAsker;
}

/** A conversation to go on with (`session/load`). */
export interface LoadedConversation {
  conversation: LLMMessage[];
  link: NonNullable<Trajectory["resumed_from"]>;
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

const MODE_NAMES: Record<ApprovalMode, [string, string]> = {
  never: ["Never ask", "every tool call runs without asking"],
  commands: ["Ask before commands", "asks before bash commands, except read-only ones"],
  all: ["Ask before commands and edits", "also asks before every edit and unknown tool call"],
};

function modeState(mode: ApprovalMode) {
  return {
    currentModeId: mode,
    availableModes: APPROVAL_MODES.map((id) => ({
      id,
      name: MODE_NAMES[id][0],
      description: MODE_NAMES[id][1],
    })),
  };
}

/** The cwd a session request names, checked: absolute, else an invalid-params error. */
function checkedCwd(cwd: unknown): string {
  if (typeof cwd !== "string" || cwd === "") {
    throw acp.RequestError.invalidParams(
      { cwd },
      "cwd is missing: give the workspace as an absolute path",
    );
  }
  if (!isAbsolute(cwd)) {
    throw acp.RequestError.invalidParams(
      { cwd },
      `cwd '${cwd}' is relative: give the workspace as an absolute path`,
    );
  }
  return cwd;
}

/** A failure to open a session, as the client reads it. */
function openError(e: unknown): acp.RequestError {
  if (e instanceof acp.RequestError) return e;
  const message = e instanceof Error ? e.message : String(e);
  const name = e instanceof Error ? e.name : "";
  // A bad folder or flag is the request's problem; anything else is Deft's.
  return /UsageError|NotFound/.test(name)
    ? acp.RequestError.invalidParams(undefined, message)
    : acp.RequestError.internalError(undefined, message);
}

/** The prompt's content as the task text of a turn. */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push(block.text);
        break;
      case "resource_link":
        parts.push(`[${block.name}](${block.uri})`);
        break;
      case "resource": {
        const resource = block.resource as { uri: string; text?: string };
        if (typeof resource.text === "string") {
          parts.push(`<context uri="${resource.uri}">\n${resource.text}\n</context>`);
        } else parts.push(`(attached binary resource ${resource.uri}: not read)`);
        break;
      }
      default:
        throw acp.RequestError.invalidParams(
          { type: block.type },
          `Deft takes text, resource links and embedded text resources, not ${block.type}`,
        );
    }
  }
  return parts.join("\n");
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
      return options.some((o) => o.optionId === id) ? id as PermissionAnswer : null;
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
    sessions.set(id, live);
    return live;
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
    .onRequest(acp.methods.agent.session.new, async ({ params }) => {
      const cwd = checkedCwd(params.cwd);
      const live = await openLive(cwd, host.newId(), params.mcpServers ?? []);
      return { sessionId: live.id, modes: modeState(modeOf(live)) };
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
      // names it (`resumed_from`), as `deft run --resume` does.
      live.trajectoryId = host.newId();
      live.trajectoryFile = host.trajectoryPath(live.trajectoryId);
      live.client = client;
      for (const update of replayUpdates(loaded.conversation)) send(live, update);
      await live.sent;
      live.client = undefined;
      return { modes: modeState(modeOf(live)) };
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
      const live = liveOf(params.sessionId);
      if (!isApprovalMode(params.modeId)) {
        throw acp.RequestError.invalidParams(
          { modeId: params.modeId },
          `unknown mode '${params.modeId}': use one of ${APPROVAL_MODES.join(", ")}`,
        );
      }
      if (!live.session.approval) {
        throw acp.RequestError.invalidRequest(
          undefined,
          "this session has no approval gate (a replay): its mode cannot change",
        );
      }
      live.session.approval.mode = params.modeId;
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

function argumentsOf(call: LLMToolCall): Record<string, unknown> {
  const args = call.arguments;
  return args !== null && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
}

/**
 * A loaded conversation as the updates that show it: the user's and the agent's messages, each
 * tool call and how it ended.
 */
export function replayUpdates(conversation: readonly LLMMessage[]): Update[] {
  const updates: Update[] = [];
  for (const message of conversation) {
    if (message.role === "user" && message.content.trim() !== "") {
      updates.push({
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text: maskOutput(message.content) },
      });
    } else if (message.role === "assistant") {
      if (message.content.trim() !== "") {
        updates.push({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: maskOutput(message.content) },
        });
      }
      for (const call of message.tool_calls ?? []) {
        let effect: CallEffect | undefined;
        try {
          effect = effectsOf(normalizeToolName(call.name), argumentsOf(call));
        } catch {
          effect = undefined;
        }
        updates.push({
          sessionUpdate: "tool_call",
          toolCallId: call.call_id,
          title: maskOutput(toolTitle(call, effect)),
          kind: toolKind(call.name, effect),
          status: "pending",
          rawInput: call.arguments,
        });
      }
    } else if (message.role === "tool") {
      updates.push({
        sessionUpdate: "tool_call_update",
        toolCallId: message.call_id,
        status: message.is_error ? "failed" : "completed",
        content: message.content === ""
          ? []
          : [{ type: "content", content: { type: "text", text: maskOutput(message.content) } }],
      });
    }
  }
  return updates;
}
