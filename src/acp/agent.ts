/**
 * The ACP agent's state and its answer to each request: the open sessions (each a Deft session
 * with its ACP console, asker and conversation), what the client offers, and one method per
 * request or notification. server.ts wires these methods to the SDK's agent app.
 */
import * as acp from "@agentclientprotocol/sdk";
import type { AgentResult } from "../agent/agent.ts";
import { APPROVAL_MODES, type ApprovalMode, isApprovalMode } from "../gate/modes.ts";
import type { Session } from "../agent/session.ts";
import type { LLMMessage, LLMToolCall } from "../llm/types.ts";
import type { TrajectoryRecorder } from "../trajectory/recorder.ts";
import { AcpConsole, type Update } from "./console.ts";
import { isPermissionAnswer, type PermissionAnswer, PermissionAsker } from "./permission.ts";
import { type ClientFs, ClientFsEditor } from "./client_fs.ts";
import { normalizeToolName } from "../tools/executor.ts";
import { maskOutput } from "../policy/secrets.ts";
import { effectsOf } from "../tools/catalog.ts";
import { replayUpdates } from "./replay.ts";
import { checkedCwd, openError, promptText, usedTokens } from "./requests.ts";
import { type AcpCommandContext, commandIn, commandsUpdate, commandText } from "./commands.ts";
import { configOptions, MODE_OPTION, MODEL_OPTION, modeState } from "./session_options.ts";
import type { AcpHost, LoadedConversation } from "./host.ts";

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

/** A prompt's answer to the client. */
type PromptAnswer = { stopReason: "cancelled" | "end_turn" | "max_turn_requests" };

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
    stopShells: () => live.session.executor.stopShells(),
  };
}

/**
 * The session's editor given the client's buffers as its store (the same editor, see
 * client_fs.ts; the session's own editor does what buffers do not hold); not in a container,
 * whose files are not the editor's. Only the tool changes: its calls pass the session's gates
 * (hooks, rules, the approval mode) as before.
 */
function useClientFs(live: Live): void {
  const { session } = live;
  if (!session.workplace.onHost) return;
  const editor = session.executor.find("str_replace_based_edit_tool");
  if (!editor) return;
  const wrapped = new ClientFsEditor(editor, () => clientFs(live));
  live.clientEditor = wrapped;
  session.executor.replaceTool(editor.name, wrapped);
}

/** The open sessions of one connection, and how each request is answered. */
export class AcpAgent {
  readonly #sessions = new Map<string, Live>();
  /** What the client said it offers (initialize). */
  #clientCaps: acp.ClientCapabilities | undefined;

  constructor(private readonly host: AcpHost) {}

  initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.#clientCaps = params.clientCapabilities;
    return {
      protocolVersion: Math.min(params.protocolVersion, acp.PROTOCOL_VERSION),
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {} },
      },
      agentInfo: { name: "deft", title: "Deft", version: this.host.version },
      authMethods: [],
    };
  }

  async newSession(params: acp.NewSessionRequest, client: acp.AgentContext) {
    const cwd = checkedCwd(params.cwd);
    const live = await this.#open(cwd, this.host.newId(), params.mcpServers ?? []);
    await this.host.opened(live.id, live.session.workspace)
      .catch((e) => this.host.note(`could not note the new session: ${(e as Error).message}`));
    // The commands are the session's once the client knows its id: after this answer.
    setTimeout(() => {
      client.notify(acp.methods.client.session.update, {
        sessionId: live.id,
        update: commandsUpdate(this.host.commands),
      }).catch((e) => this.host.note(`could not send the commands: ${(e as Error).message}`));
    }, 0);
    return { sessionId: live.id, ...await this.#settings(live) };
  }

  async loadSession(params: acp.LoadSessionRequest, client: acp.AgentContext) {
    const cwd = checkedCwd(params.cwd);
    if (this.#sessions.has(params.sessionId)) {
      throw acp.RequestError.invalidParams(
        { sessionId: params.sessionId },
        `session '${params.sessionId}' is already open`,
      );
    }
    let loaded: LoadedConversation;
    try {
      loaded = await this.host.load(params.sessionId, cwd);
    } catch (e) {
      throw acp.RequestError.invalidParams(
        { sessionId: params.sessionId },
        e instanceof Error ? e.message : String(e),
      );
    }
    const live = await this.#open(cwd, params.sessionId, params.mcpServers ?? []);
    live.conversation = loaded.conversation;
    live.link = loaded.link;
    // The loaded session's file stays as it is: the next turns go to a new trajectory that
    // names it (`resumed_from`), as `deft run --resume` does. A session never prompted has
    // no file yet: its first turn records it under its own id.
    if (loaded.link) {
      live.trajectoryId = this.host.newId();
      live.trajectoryFile = this.host.trajectoryPath(live.trajectoryId);
    }
    live.client = client;
    for (const update of replayUpdates(loaded.conversation)) this.#send(live, update);
    this.#send(live, commandsUpdate(this.host.commands));
    await live.sent;
    live.client = undefined;
    return await this.#settings(live);
  }

  async listSessions(params: acp.ListSessionsRequest) {
    const cwd = params.cwd == null ? undefined : checkedCwd(params.cwd);
    try {
      return { sessions: await this.host.list(cwd) };
    } catch (e) {
      throw openError(e);
    }
  }

  setMode(sessionId: string, modeId: unknown): void {
    const live = this.#live(sessionId);
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
  }

  async setModel(sessionId: string, value: unknown): Promise<void> {
    const live = this.#live(sessionId);
    try {
      await this.host.setModel(live.session, value);
    } catch (e) {
      throw acp.RequestError.invalidParams({ value }, maskOutput((e as Error).message));
    }
    live.model = String(value);
  }

  async setConfigOption(params: acp.SetSessionConfigOptionRequest) {
    const live = this.#live(params.sessionId);
    if (params.configId === MODE_OPTION) this.setMode(live.id, params.value);
    else if (params.configId === MODEL_OPTION) await this.setModel(live.id, params.value);
    else {
      throw acp.RequestError.invalidParams(
        { configId: params.configId },
        `unknown config option '${params.configId}': Deft's are ${MODE_OPTION}, ${MODEL_OPTION}`,
      );
    }
    return { configOptions: (await this.#settings(live)).configOptions };
  }

  /** One prompt: a slash command, or a turn of the session's conversation. */
  async prompt(params: acp.PromptRequest, client: acp.AgentContext): Promise<PromptAnswer> {
    const live = this.#live(params.sessionId);
    if (live.turn) {
      throw acp.RequestError.invalidRequest(
        { sessionId: live.id },
        "a prompt is already running in this session: wait for it, or send session/cancel",
      );
    }
    const text = promptText(params.prompt);
    live.turn = new AbortController();
    live.client = client;
    live.console.beginTurn();
    try {
      const command = commandIn(text, this.host.commands);
      return command ? await this.#runCommand(live, command) : await this.#turn(live, text);
    } finally {
      await live.sent;
      live.turn = undefined;
      live.client = undefined;
    }
  }

  /** `session/cancel`: a cancel for nothing (no such session, no running turn) is no error. */
  cancel(sessionId: string): void {
    const live = this.#sessions.get(sessionId);
    if (live?.turn) this.#cancelTurn(live);
  }

  /** Ends every session: running turns cancelled, tools and containers closed. */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const live of all) if (live.turn) this.#cancelTurn(live);
    await Promise.all(all.map((live) => this.host.close(live.session).catch(() => {})));
  }

  /** One turn of the conversation, its answer and usage sent to the client. */
  async #turn(live: Live, text: string): Promise<PromptAnswer> {
    const turn = live.turn!;
    let result: AgentResult;
    try {
      const ran = await this.host.runTurn(live.session, text, {
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
      if (turn.signal.aborted) return { stopReason: "cancelled" };
      throw acp.RequestError.internalError(
        undefined,
        `the turn failed: ${maskOutput(e instanceof Error ? e.message : String(e))}`,
      );
    }
    if (turn.signal.aborted || result.interrupted) return { stopReason: "cancelled" };
    // A final answer not streamed (task_done's result, a client that does not stream) is
    // sent as the agent's message.
    const answer = result.finalResult;
    if (answer && !live.console.streamed.includes(answer.trim())) {
      this.#send(live, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: maskOutput(answer) },
      });
    }
    // How full the model's context is, where the configuration says how large it is.
    const size = live.session.config.model.settings.context_window;
    const usage = live.recorder?.data.agent_steps.at(-1)?.llm_response?.usage;
    if (size && usage) {
      this.#send(live, {
        sessionUpdate: "usage_update",
        used: usage.input_tokens + usage.output_tokens,
        size,
      });
    }
    const outOfSteps = !result.success && result.steps >= live.session.config.agent.max_steps;
    // A budget cap allows no more model requests: the client hears it as the request limit.
    const capped = result.budgetStop !== undefined;
    return { stopReason: outOfSteps || capped ? "max_turn_requests" : "end_turn" };
  }

  /** A prompt that is a slash command: run (or refused), never sent to the model. */
  async #runCommand(
    live: Live,
    kind: { command: string } | { refused: string },
  ): Promise<PromptAnswer> {
    const signal = live.turn!.signal;
    if ("refused" in kind) {
      this.#send(live, {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: kind.refused },
      });
    } else {
      try {
        await this.host.runCommand(kind.command, this.#commandContext(live, signal));
      } catch (e) {
        if (!signal.aborted) {
          throw acp.RequestError.internalError(
            undefined,
            `${kind.command.split(/\s/)[0]} failed: ${maskOutput((e as Error).message)}`,
          );
        }
      }
    }
    return { stopReason: signal.aborted ? "cancelled" : "end_turn" };
  }

  /** What `deft interactive`'s slash commands read and change, here the ACP session's. */
  #commandContext(live: Live, signal: AbortSignal): AcpCommandContext {
    const host = this.host;
    return {
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
        this.#send(live, {
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
    };
  }

  /** Opens a Deft session for ACP session `id`, with its console and asker. */
  async #open(cwd: string, id: string, mcpServers: readonly acp.McpServer[]): Promise<Live> {
    // The console and the asker need the session record; it is filled in below.
    const live = { id, sent: Promise.resolve() } as Live;
    const console = new AcpConsole({
      send: (update) => this.#send(live, update),
      effects: (call: LLMToolCall) => {
        const args = (call.arguments ?? {}) as Record<string, unknown>;
        const tool = live.session?.executor.find(call.name);
        return tool ? tool.effects(args) : effectsOf(normalizeToolName(call.name), args);
      },
      workspace: () => live.session?.workspace ?? cwd,
      // In a container the files are not the host's: no diffs are read here.
      hostFiles: () => live.session?.workplace.onHost ?? true,
      note: this.host.note,
      clientEdit: (path) => live.clientEditor?.takeEdit(path),
    });
    const asker = new PermissionAsker({
      console,
      request: (toolCall, always) => this.#ask(live, toolCall, always),
      bufferText: (path) => live.clientEditor?.bufferText(path) ?? Promise.resolve(undefined),
      note: this.host.note,
    });
    try {
      live.session = await this.host.open(cwd, { console, asker }, mcpServers);
    } catch (e) {
      throw openError(e);
    }
    live.console = console;
    const fs = this.#clientCaps?.fs;
    if (fs?.readTextFile && fs.writeTextFile) useClientFs(live);
    live.conversation = [];
    live.trajectoryId = id;
    live.trajectoryFile = this.host.trajectoryPath(id);
    live.turns = 0;
    live.tokens = 0;
    live.model = live.session.config.model.name;
    this.#sessions.set(id, live);
    return live;
  }

  /** Asks the client about a tool call; null when there is no answer. */
  async #ask(
    live: Live,
    toolCall: Record<string, unknown>,
    always: boolean,
  ): Promise<PermissionAnswer | null> {
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
      if (!signal.aborted) this.host.note(`permission request failed: ${(e as Error).message}`);
      return null;
    }
  }

  /** Sends `update` to the running prompt's client, in order; dropped when there is none. */
  #send(live: Live, update: Update): void {
    const client = live.client;
    if (!client) return;
    live.sent = live.sent.then(() =>
      client.notify(acp.methods.client.session.update, {
        sessionId: live.id,
        update: update as acp.SessionUpdate,
      }).catch((e) => this.host.note(`could not send a session update: ${(e as Error).message}`))
    );
  }

  /** The session's modes and config options, as session/new and session/load answer them. */
  async #settings(live: Live) {
    return {
      modes: modeState(this.#modeOf(live)),
      configOptions: configOptions(
        this.#modeOf(live),
        live.model,
        await this.host.models(live.session),
      ),
    };
  }

  #modeOf(live: Live): ApprovalMode {
    return live.session.approval?.mode ?? "never";
  }

  #live(sessionId: string): Live {
    const live = this.#sessions.get(sessionId);
    if (!live) {
      throw acp.RequestError.invalidParams(
        { sessionId },
        `unknown session '${sessionId}': open one with session/new (or session/load) first`,
      );
    }
    return live;
  }

  #cancelTurn(live: Live): void {
    live.turn?.abort(new Error("cancelled by the client"));
    // As Ctrl-C in `deft interactive`: killing the shell ends a running command now; the next
    // command gets a fresh shell.
    void live.session.executor.stopShells();
  }
}
