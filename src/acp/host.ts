/**
 * What `deft acp`'s command hands the protocol side: how a Deft session opens and closes, how a
 * turn runs, how sessions are found again, and the slash commands and models on offer.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentResult } from "../agent/agent.ts";
import type { Session, TaskOptions } from "../agent/session.ts";
import type { LLMMessage } from "../llm/types.ts";
import type { Trajectory, TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { AcpConsole } from "./console.ts";
import type { PermissionAsker } from "./permission.ts";
import type { AcpCommandContext, CommandInfo } from "./commands.ts";
import type { ModelChoice } from "./model.ts";

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
