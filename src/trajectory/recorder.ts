/**
 * Records a run as one JSON file in Trae Agent's trajectory shape. The whole document is written
 * atomically (temporary file, then rename) at the first record and when the run ends; in between,
 * each interaction and step is appended to its journal (journal.ts), so a step costs what it holds,
 * however long the run, and a crash loses at most the record being written. Every reader folds the
 * journal in (`readTrajectory`). Secrets (API keys) are replaced before anything is written.
 */
import { deftStateDir } from "../policy/dirs.ts";
import { readOwnText } from "../policy/own_file.ts";
import { addOutputSecrets, outputMasker } from "../policy/secrets.ts";
import { dirname } from "node:path";
import { z } from "zod";
import type { LLMMessage, LLMResponse, LLMUsage } from "../llm/types.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { ResultRecord } from "../tools/base.ts";
import { addUsage, emptyUsage } from "../llm/types.ts";
import { foldJournal, headerOf, type JournalEntry, journalPath, JournalWriter } from "./journal.ts";

/** One model call as recorded. */
export interface RecordedInteraction {
  timestamp: string;
  provider: string;
  model: string;
  input_messages: LLMMessage[];
  response: LLMResponse;
  tools_available: string[];
}

/** One tool result as recorded. */
export interface RecordedToolResult {
  call_id: string;
  name: string;
  success: boolean;
  result: string | null;
  error: string | null;
  /**
   * Whether the call was let through and who decided (the mode, an "always" or "session" answer,
   * the user, or for a replay the recording); absent in files from older versions.
   */
  approval?: ApprovalDecision;
  /** The child agent a `Task` call ran: its session, trajectory and patch files. */
  subagent?: ResultRecord["subagent"];
  /** The editor calls a `Task` apply made, one a file, in order (`/undo` takes them back). */
  edits?: ResultRecord["edits"];
}

/** One agent step as recorded. */
export interface RecordedStep {
  step_number: number;
  timestamp: string;
  state: "completed" | "error" | "interrupted";
  llm_response: LLMResponse | null;
  tool_calls: LLMResponse["tool_calls"];
  tool_results: RecordedToolResult[];
  reflection: string | null;
  error: string | null;
  /** Step summary from the lakeview model, when enabled. */
  lakeview?: { tag: string; summary: string } | null;
}

/** The whole trajectory file. */
export interface Trajectory {
  task: string;
  /** The workspace the run worked in; replay maps it to the replay's workspace. */
  working_dir?: string;
  start_time: string;
  end_time: string | null;
  provider: string;
  model: string;
  max_steps: number;
  llm_interactions: RecordedInteraction[];
  agent_steps: RecordedStep[];
  success: boolean;
  final_result: string | null;
  execution_time: number;
  total_usage: LLMUsage;
  /** What context management shortened, step by step. */
  context_events?: unknown[];
  /** Deft's trajectory format; absent in files from older versions and from Trae Agent. */
  format_version?: number;
  /** The session this file records; `deft run --resume ID` takes it. */
  session_id?: string;
  /**
   * The session this one continues (`--continue`/`--resume`), if any; `by: "compact"` when it
   * goes on from that session's /compact summary (the same conversation, not a new one).
   */
  resumed_from?: { session_id: string | null; path: string; by?: "compact" } | null;
  /**
   * Set on a helper session Deft ran for a slash command (`/init`): the command, and the
   * conversation it was typed in (null fields: none had started). Pickers and `--continue` skip
   * helpers. Absent in user sessions and in older files.
   */
  helper_of?: HelperLink;
  /** Set on a child agent's trajectory (the `Task` tool): the session that ran it, and its file. */
  parent?: { session_id: string | null; trajectory: string | null };
  /** The project instruction files (AGENTS.md) added to the system prompt. */
  project_instructions?: { path: string; bytes: number; truncated: boolean }[];
  /** Where the tools ran when in a container (absent: on the host; older files have none). */
  container?: ContainerMarker;
  /** A hook's `continue: false` that stopped the run: its event, hook, config file and reason. */
  hook_stop?: { event: string; hook: string; source?: string; reason: string };
  /**
   * Each destination the network proxy allowed or refused during the run, in order (host and
   * port only, never a path; absent: no network list, or no connection asked for).
   */
  network?: NetworkRecord[];
  /** Decisions past the most `network` keeps (shown and counted, not listed; absent: none). */
  network_not_recorded?: number;
  /**
   * The session's budget caps and spend (src/agent/budget.ts `BudgetRecord`), with the cap that
   * stopped it; set when a cap was given.
   */
  budget?: {
    caps: { max_cost_usd?: number; max_tokens?: number; max_wall_time?: number };
    spent: { cost_usd: number; tokens: number; wall_time: number };
    batch?: unknown;
    stopped?: { cap: string; limit: number; scope: string; spent: unknown };
  };
  /** The workspace's state at the session's start and after each turn (absent: none taken). */
  checkpoints?: CheckpointRecord[];
  /** Each rewind of the conversation and files, oldest first (absent: none). */
  rewinds?: RewindRecord[];
  /** Each /compact of the conversation, oldest first (absent: none). */
  compactions?: CompactionRecord[];
  /** What the user did between the model's steps, oldest first (absent: older files). */
  events?: RecordedEvent[];
}

/**
 * Something the user did in the conversation besides the model's steps: a prompt (as typed), a
 * `!command` with what it printed, an `/undo` with what it said. (Rewinds and /compact have
 * records of their own.)
 */
export type SessionEvent =
  | { kind: "prompt"; text: string }
  | { kind: "shell"; command: string; output: string }
  | { kind: "undo"; said: string };

/** A session event as recorded: when, and how many steps the file held then. */
export type RecordedEvent = SessionEvent & { time: string; at_steps: number };

/** Characters of one text of an event that are kept (the middle is cut); the rest is elsewhere. */
export const EVENT_TEXT_CHARS = 8000;

function cutMiddle(text: string): string {
  if (text.length <= EVENT_TEXT_CHARS) return text;
  const half = EVENT_TEXT_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - EVENT_TEXT_CHARS} characters cut …]\n${
    text.slice(-half)
  }`;
}

/** One decision of the network proxy (src/policy/network): where to, and whether it went. */
export interface NetworkRecord {
  time: string;
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused (`not in allow list`), or `allowed`. */
  reason: string;
}

/**
 * A /compact: the conversation it left (the model's summary in place of the messages), recorded
 * at once, so a resume goes on from it while no model call or rewind has followed it.
 */
export interface CompactionRecord {
  time: string;
  /** `llm_interactions.length` and `rewinds.length` when it happened. */
  at_interactions: number;
  at_rewinds: number;
  messages: LLMMessage[];
}

/** Ranges `[from, to)` of `llm_interactions` that make up a conversation, in order. */
export type InteractionRanges = [number, number][];

/**
 * The workspace's state after a turn (or at the start, or before a rewind): a git tree in the
 * session's checkpoint store (src/agent/checkpoints.ts), and the conversation then.
 */
export interface CheckpointRecord {
  /** 1, 2, … in the order taken. */
  id: number;
  /** The turn it follows (0: the session's start). */
  turn: number;
  kind: "start" | "turn" | "rewind";
  /** One line: the turn's task, or what the checkpoint is. */
  label: string;
  time: string;
  /** The tree's id in the store. */
  tree: string;
  /** The conversation then: ranges of `llm_interactions`, and its length in model calls. */
  conversation: InteractionRanges;
  interactions: number;
  /** Files that differ from the checkpoint before it. */
  files_changed: number;
  /** New files the checkpoint does not hold (large, or binary above a small size). */
  left_out?: string[];
  /** Where the store is (host path, or inside the container). */
  store: string;
  /** Milliseconds it took. */
  ms: number;
}

/** A rewind: the checkpoint gone back to, what was restored, and the conversation from then on. */
export interface RewindRecord {
  time: string;
  to_checkpoint: number;
  to_turn: number;
  files: boolean;
  conversation: boolean;
  /** The checkpoint of the state before the rewind (undo a rewind by going back to it). */
  before_checkpoint?: number;
  /** `llm_interactions.length` when it happened; later interactions follow `ranges`. */
  at_interactions: number;
  ranges: InteractionRanges;
}

/** Which slash command a helper session ran for, and in which conversation. */
export interface HelperLink {
  command: string;
  session_id: string | null;
  path: string | null;
}

/** The container a session's tools ran in, as its trajectory records it. */
export interface ContainerMarker {
  runtime: string;
  /** The image it was started from (an attached container's, as the runtime reports it). */
  image: string | null;
  /** The container's id (the name or id given, for an attached one). */
  id: string;
}

/** The marker of a container (src/container's Container) that a session's tools run in. */
export function containerMarker(
  container: { cli: { program: string }; image?: string; id: string },
): ContainerMarker {
  return { runtime: container.cli.program, image: container.image ?? null, id: container.id };
}

/** The trajectory format this version writes and can resume. */
export const TRAJECTORY_FORMAT_VERSION = 1;

/** Writes a trajectory file as the run goes. */
export class TrajectoryRecorder {
  readonly data: Trajectory;
  readonly #started = performance.now();
  #lastRecorded: LLMMessage | undefined;
  /** The journal of the document on disk; none before the first record and after the end. */
  #journal: JournalWriter | undefined;
  /** The header as last written (masked JSON), so an unchanged one is not appended again. */
  #header = "";
  /** Added to step numbers, so the turns of one conversation number their steps on. */
  stepOffset = 0;

  constructor(
    readonly path: string,
    init: {
      task: string;
      working_dir?: string;
      provider: string;
      model: string;
      max_steps: number;
      session_id?: string;
      resumed_from?: Trajectory["resumed_from"];
      helper_of?: HelperLink;
      parent?: Trajectory["parent"];
      container?: ContainerMarker;
    },
    secrets: readonly (string | undefined)[] = [],
  ) {
    // Keys Deft was given join the shared output masker, so the console, stream-json events and
    // errors hide exactly what this file hides.
    addOutputSecrets(secrets);
    this.data = {
      format_version: TRAJECTORY_FORMAT_VERSION,
      ...init,
      session_id: init.session_id ?? newSessionId(),
      resumed_from: init.resumed_from ?? null,
      start_time: new Date().toISOString(),
      end_time: null,
      llm_interactions: [],
      agent_steps: [],
      success: false,
      final_result: null,
      execution_time: 0,
      total_usage: emptyUsage(),
    };
  }

  /** Records one model call. */
  recordInteraction(interaction: Omit<RecordedInteraction, "timestamp">): void {
    const recorded = { timestamp: new Date().toISOString(), ...interaction };
    this.data.llm_interactions.push(recorded);
    addUsage(this.data.total_usage, interaction.response.usage);
    this.#record({ interaction: recorded, total_usage: this.data.total_usage });
  }

  /**
   * The messages of `conversation` this file has not recorded yet: those after the last one passed
   * to `markRecorded` (all of them in a new file, so a resumed run's file stands on its own).
   */
  unrecorded(conversation: readonly LLMMessage[]): LLMMessage[] {
    const last = this.#lastRecorded ? conversation.lastIndexOf(this.#lastRecorded) : -1;
    return conversation.slice(last + 1);
  }

  /** Notes that the conversation up to `message` (the model's answer) is in the file. */
  markRecorded(message: LLMMessage): void {
    this.#lastRecorded = message;
  }

  /** Records one finished step. */
  recordStep(step: Omit<RecordedStep, "timestamp">): void {
    const recorded = {
      timestamp: new Date().toISOString(),
      ...step,
      step_number: step.step_number + this.stepOffset,
    };
    this.data.agent_steps.push(recorded);
    this.#record({ step: recorded });
  }

  /** Attaches a step summary to a recorded step. */
  annotateStep(stepNumber: number, lakeview: RecordedStep["lakeview"]): void {
    const number = stepNumber + this.stepOffset;
    const step = this.data.agent_steps.find((s) => s.step_number === number);
    if (!step) return;
    step.lakeview = lakeview;
    this.#record({ annotate: { step_number: number, lakeview } });
  }

  /** Records the outcome and writes the whole file, the journal folded in. */
  finalize(success: boolean, finalResult: string | null): void {
    this.data.success = success;
    this.data.final_result = finalResult;
    this.data.end_time = new Date().toISOString();
    this.data.execution_time = (performance.now() - this.#started) / 1000;
    this.#writeWhole(false);
  }

  /** Records that /compact replaced the conversation by `messages`, written to the file at once. */
  recordCompaction(messages: readonly LLMMessage[]): void {
    (this.data.compactions ??= []).push({
      time: new Date().toISOString(),
      at_interactions: this.data.llm_interactions.length,
      at_rewinds: this.data.rewinds?.length ?? 0,
      messages: [...messages],
    });
    this.flush();
  }

  /** Records what the user did (a prompt, a `!command`, `/undo`), written to the file at once. */
  recordEvent(event: SessionEvent): void {
    const cut = Object.fromEntries(
      Object.entries(event).map(([k, v]) => [k, k === "kind" ? v : cutMiddle(v)]),
    ) as SessionEvent;
    const recorded = {
      ...cut,
      time: new Date().toISOString(),
      at_steps: this.data.agent_steps.length,
    };
    (this.data.events ??= []).push(recorded);
    this.#record({ event: recorded });
  }

  /** Records what changed besides interactions and steps (checkpoints, rewinds, a hook's stop …). */
  flush(): void {
    this.#record(undefined);
  }

  /**
   * Appends `entry` (and the header, if it changed) to the journal. Without one (the first record,
   * or the first of a new turn) the whole file is written, and a journal opened for the steps to
   * come; what arrives after a run ended without starting another (a late step summary, the
   * turn's checkpoint) is written whole, so an ended run's file always stands alone.
   */
  #record(entry: JournalEntry | undefined): void {
    if (!this.#journal) {
      this.#writeWhole(entry !== undefined && ("interaction" in entry || "step" in entry));
      return;
    }
    // Keys as well as values: a secret can be an object key in a tool's arguments.
    const masker = outputMasker();
    if (entry) this.#journal.append(masker.maskDeep(entry));
    const header = masker.maskDeep(headerOf(this.data));
    const text = JSON.stringify(header);
    if (text !== this.#header) {
      this.#header = text;
      this.#journal.append({ header });
    }
  }

  /**
   * Writes the whole document atomically, masked. With `journal`, a new journal goes with it
   * (named in the document, so only this generation is ever folded in); without, the run's file
   * stands alone and its journal is removed.
   */
  #writeWhole(journal: boolean): void {
    const masker = outputMasker();
    const masked = masker.maskDeep(this.data);
    const id = journal ? crypto.randomUUID() : undefined;
    const text = JSON.stringify(id ? { ...masked, journal_id: id } : masked, null, 2);
    Deno.mkdirSync(dirname(this.path), { recursive: true });
    const temp = `${this.path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    Deno.writeTextFileSync(temp, text + "\n");
    Deno.renameSync(temp, this.path);
    this.#journal?.close(this.path, true);
    this.#journal = id ? new JournalWriter(this.path, id) : undefined;
    this.#header = JSON.stringify(headerOf(masked));
  }
}

/**
 * Largest trajectory read (`-t`, a resume, `deft sessions`, `deft report`), and the largest
 * journal beside one: far above a long session's tens of megabytes, and small enough to parse.
 */
export const MAX_TRAJECTORY_BYTES = 256 * 1024 * 1024;

/**
 * Reads a trajectory file written by Deft or Trae Agent; a run still going (or one that crashed)
 * is read with its journal folded in. Any path may be handed in (or left in a repository), so the
 * file and its journal are read as Deft's own files are: regular files within
 * MAX_TRAJECTORY_BYTES, never a FIFO or device (an `OwnFileError` saying so).
 */
export async function readTrajectory(path: string): Promise<Trajectory> {
  const data = JSON.parse(
    await readOwnText(path, {
      limit: MAX_TRAJECTORY_BYTES,
      what: "a trajectory",
      hint: "Name a trajectory file Deft wrote, or a session id from deft sessions.",
    }),
  );
  if (!Array.isArray(data?.llm_interactions) || !Array.isArray(data?.agent_steps)) {
    throw new Error(`${path} is not a trajectory (no llm_interactions/agent_steps)`);
  }
  if (typeof data.journal_id !== "string") return data as Trajectory;
  let journal: string;
  try {
    journal = await readOwnText(journalPath(path), {
      limit: MAX_TRAJECTORY_BYTES,
      what: "a trajectory's journal",
      hint: "Remove the journal beside the trajectory to read the run up to its first step.",
    });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return data as Trajectory;
    throw e;
  }
  const folded = foldJournal(data as Trajectory, journal);
  delete (folded as { journal_id?: string }).journal_id;
  return folded;
}

/** Deft's state folder: `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`. */
export function stateDir(): string {
  return deftStateDir();
}

/** Where trajectories go by default: the user state dir, never the workspace. */
export function trajectoriesDir(): string {
  return `${stateDir()}/trajectories`;
}

/** A new session id: the start time and a random suffix, e.g. `20260102_150405_a1b2c3`. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
  return `${stamp}_${crypto.randomUUID().slice(0, 6)}`;
}

/** Where a session's trajectory goes by default. */
export function defaultTrajectoryPath(sessionId = newSessionId()): string {
  return `${trajectoriesDir()}/trajectory_${sessionId}.json`;
}

// The shapes Deft relies on when it lists or resumes a session. A trajectory file is data from
// disk (a crash, a hand edit, a file someone planted): it is checked before anything uses it.
const toolCallShape = z.looseObject({
  call_id: z.string(),
  name: z.string(),
  arguments: z.unknown(),
});
const messageShape = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: z.string() }),
  z.looseObject({ role: z.literal("user"), content: z.string() }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.string(),
    tool_calls: z.array(toolCallShape).optional(),
  }),
  z.looseObject({
    role: z.literal("tool"),
    call_id: z.string(),
    name: z.string(),
    content: z.string(),
    is_error: z.boolean(),
  }),
]);
const listedShape = z.looseObject({
  task: z.string(),
  working_dir: z.string().optional(),
  container: z.looseObject({
    runtime: z.string(),
    image: z.string().nullable(),
    id: z.string(),
  }).optional(),
  start_time: z.string(),
  end_time: z.string().nullable(),
  success: z.boolean(),
  session_id: z.string().optional(),
  format_version: z.number().int().optional(),
  resumed_from: z.looseObject({
    session_id: z.string().nullable(),
    path: z.string(),
    by: z.string().optional(),
  }).nullable().optional(),
  helper_of: z.looseObject({
    command: z.string(),
    session_id: z.string().nullable(),
    path: z.string().nullable(),
  }).optional(),
  final_result: z.string().nullable().optional(),
  llm_interactions: z.array(z.unknown()),
  agent_steps: z.array(z.looseObject({ state: z.string() })),
});
const resumableShape = listedShape.extend({
  llm_interactions: z.array(z.looseObject({
    input_messages: z.array(messageShape),
    response: z.looseObject({ content: z.string(), tool_calls: z.array(toolCallShape) }),
  })),
  compactions: z.array(z.looseObject({
    at_interactions: z.number().int(),
    at_rewinds: z.number().int(),
    messages: z.array(messageShape),
  })).optional(),
  agent_steps: z.array(z.looseObject({
    state: z.string(),
    tool_calls: z.array(toolCallShape),
    tool_results: z.array(z.looseObject({
      call_id: z.string(),
      name: z.string(),
      success: z.boolean(),
      result: z.string().nullable(),
      error: z.string().nullable(),
    })),
  })),
});

/** A trajectory file whose shape is not what Deft needs; the message names the file and field. */
export class TrajectoryShapeError extends Error {
  override name = "TrajectoryShapeError";
}

/**
 * Checks `data` (read from `path`) has the shape `use` needs: `list` for `deft sessions`, `resume`
 * for `--resume`/`--continue` (every message and result the conversation is rebuilt from).
 * Throws a TrajectoryShapeError naming the file and the first wrong field.
 */
export function checkTrajectory(data: unknown, path: string, use: "list" | "resume"): Trajectory {
  const parsed = (use === "list" ? listedShape : resumableShape).safeParse(data);
  if (parsed.success) return data as Trajectory;
  const issue = parsed.error.issues[0];
  const field = issue.path.reduce<string>(
    (at, part) =>
      typeof part === "number" ? `${at}[${part}]` : at ? `${at}.${String(part)}` : String(part),
    "",
  );
  throw new TrajectoryShapeError(
    `${path} is not a valid trajectory: field ${field || "(top level)"}: ${issue.message}`,
  );
}
