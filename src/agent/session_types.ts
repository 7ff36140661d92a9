/**
 * What a session is (`Session`) and what a command hands in to open one: its options from the
 * command line, the user's side (workspace, console, how to ask) and what each turn did.
 */
import type { AgentConsole } from "./console.ts";
import type { ApprovalGate } from "../gate/approval.ts";
import type { ApprovalMode } from "../gate/modes.ts";
import type { AskUser } from "../gate/question.ts";
import type { ProjectInstructions } from "./instructions.ts";
import type { ApprovalRules } from "./approval_rules.ts";
import type { ConfigOverrides, RunConfig } from "../config/resolve.ts";
import type { LLMClient, LLMUsage } from "../llm/types.ts";
import type { WorkspaceBaseline } from "./patch.ts";
import type { CheckpointPlace, EarlyCheckpoints } from "./checkpoints.ts";
import type { Workplace } from "./workplace.ts";
import type { ToolExecutor } from "../tools/executor.ts";
import type { Hooks } from "../hooks/hooks.ts";
import type { Trajectory, TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { WorkplaceOptions } from "./workplace_open.ts";
import type { Budget, BudgetFlags } from "./budget.ts";
import type { ShellBoard } from "./shell_board.ts";
import type { StartWork } from "./session_start.ts";

/** The settings a session takes from the command line, over the config file. */
export interface SessionOptions extends ConfigOverrides, WorkplaceOptions, BudgetFlags {
  /** `--budget-ledger FILE`: a batch's shared budget (agent/budget_ledger.ts). */
  budgetLedger?: string;
  configFile?: string;
  /**
   * The folder whose project config (`deft.yaml`) and trust count: an ACP session's folder.
   * Default: the current directory.
   */
  configFolder?: string;
  /** `--approval`; unset: the config's `approval`, else the command's default. */
  approval?: string;
  /** False with `--no-project-instructions`. */
  projectInstructions?: boolean;
  /** `--approval-rules FILE`: a policy file of allow/ask/deny rules (agent/approval_rules.ts). */
  approvalRules?: string;
  /**
   * `--approve-asks`: where nobody can be asked (`Asking.unattended`), a call an ask rule or a
   * hook's ask is about runs unasked instead of being refused.
   */
  approveAsks?: boolean;
}

/** How a command asks its user: its default approval mode and the question it puts. */
export interface Asking {
  defaultMode: ApprovalMode;
  ask: AskUser;
  /** Someone can answer: standard input is a terminal. */
  terminal: boolean;
  /** Keep a gate even in mode `never`, so the mode can change later (`/approval`). */
  switchable?: boolean;
  /**
   * The command, when it runs unattended (`deft run`, `-p`, a batch task): in mode `never`
   * nobody is asked, so a call a rule or hook asks about is refused (unless `--approve-asks`).
   */
  unattended?: string;
}

/** The user's side of a session, which the command provides. */
export interface SessionIO {
  /**
   * The workspace: a host folder's real path; with a container, `-w` as given (a folder inside,
   * resolved there).
   */
  workspace: string;
  console: AgentConsole;
  asking: Asking;
  /** Writes a line of diagnostics (config warnings, approval prompts' context) to the user. */
  write: (text: string) => void;
  /**
   * Called once the workplace is open, before anything is done there (the baseline, the tools,
   * the model client): where a command finds (and rewinds) the session it goes on with, which
   * only the open place knows (a container's workspace and image). A throw ends the opening,
   * the workplace closed.
   */
  opened?: (workplace: Workplace) => Promise<void>;
  /**
   * Leave the start work (the baseline) to `Session.start`, begun after the front end's prompt
   * is drawn, or by the first turn or tool call; what it has to say (a warning, the error that
   * stops it) goes to `tell`.
   */
  startLater?: { tell: (text: string) => void };
  /**
   * The front end names each trajectory's session id itself (ACP): no checkpoint store is made
   * for one at the start (`Workplace.startCheckpoints`), which no trajectory would take.
   */
  namesSessions?: boolean;
}

/** A configured model, tool set and console, living across tasks. */
export interface Session {
  config: RunConfig;
  workspace: string;
  client: LLMClient;
  lakeviewClient?: LLMClient;
  /**
   * The session's tools behind its gates (hooks, rules, the approval mode), fixed at assembly: a
   * front end swaps a tool or adds tools through its methods, which keep the gates.
   */
  readonly executor: ToolExecutor;
  console: AgentConsole;
  recording?: Trajectory;
  /** Set when tool calls may need the user's approval. */
  approval?: ApprovalGate;
  /** The approval rules in force (for /status); none in a replay. */
  approvalRules?: ApprovalRules;
  /** The AGENTS.md files for the system prompt. */
  instructions: ProjectInstructions;
  /**
   * The workspace as it was when the session opened (in a git repository; recorded inside the
   * container when there is one): the patch, "files changed" and `/diff` are relative to it.
   */
  baseline?: WorkspaceBaseline;
  /** The start work left for later (`SessionIO.startLater`): `baseline` is set when it is done. */
  start?: StartWork;
  /**
   * Where the tools act (a host folder or a container's workspace): its repository, patch,
   * checkpoints and files; `workplace.close(baseline)` when the session ends.
   */
  readonly workplace: Workplace;
  /** What each task or turn run in this session did, oldest first (for /undo and /cost). */
  turns?: TurnRecord[];
  /** Where this session's checkpoints go, per trajectory (session id); null: none are taken. */
  checkpointPlace?: { sessionId: string; at: CheckpointPlace | null };
  /** The store made at the session's start for its first trajectory's id (see Workplace). */
  early?: EarlyCheckpoints;
  /** The config's hooks (hook_gate.ts); SessionStart has fired once `hooksStarted` is set. */
  hooks?: Hooks;
  hooksStarted?: boolean;
  /**
   * The conversation starts over at the next prompt (`/clear`, `/compact`, `/resume` set it): the
   * SessionStart hooks run again then, with this `source`.
   */
  hooksRestart?: "clear" | "compact" | "resume";
  /** SessionStart context whose prompt a hook blocked: it goes with the next prompt instead. */
  hooksStartContext?: string;
  /** The session's budget caps and spend (./budget.ts); none when no cap is set. */
  budget?: Budget;
  /**
   * The `Task` tool's children (./subagent.ts), when the session runs them: told which
   * trajectory the parent records into, so each child's names it, and the running turn's
   * signal, whose abort (Ctrl-C, a client's cancel) stops them.
   */
  subagents?: {
    parent?: { session_id: string | null; trajectory: string | null };
    signal?: AbortSignal;
  };
  /** Publishes the session's background shells for `deft sessions` (./shell_board.ts). */
  shells?: ShellBoard;
  /** The trajectory the last task recorded into: the SessionEnd hooks' network goes there too. */
  recorder?: TrajectoryRecorder;
}

/** What one `runTask` did: its model, usage and the tool calls that ran. */
export interface TurnRecord {
  provider: string;
  model: string;
  /** Tokens of this turn alone. */
  usage: LLMUsage;
  /** The calls the turn's steps made, in order, with whether each succeeded. */
  calls: { name: string; arguments: unknown; success: boolean }[];
  /** Set once /undo has taken its edits back. */
  undone?: boolean;
  /**
   * What it was: a turn of the conversation, the model call of a command (/compact), or the
   * step summaries of a turn (their own model's).
   */
  kind?: "turn" | "compact" | "summaries";
}
