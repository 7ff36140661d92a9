/**
 * The hooks in force for one session, and what their answers mean, event by event, following
 * Claude Code's hooks reference: the same input fields on stdin, the same exit codes, the same
 * JSON answers (`decision`/`reason`, `continue`/`stopReason`, `hookSpecificOutput` with
 * `permissionDecision`, `permissionDecisionReason`, `updatedInput`, `additionalContext`).
 *
 * Hooks of one event that match run at once (the same command once); their answers are read in
 * config order: a deny wins over an ask, an ask over an allow, and the first `updatedInput` is
 * the rewrite. A hook that crashes, times out or answers with something that is not JSON is
 * reported and counts as no answer: the call goes on to the ordinary approval gate, never
 * "allowed" by the hook.
 *
 * `continue: false` (with `stopReason`) asks Deft to stop the run, whatever the event (but
 * SessionEnd, which ends anyway): it takes precedence over the answer's `decision`, and the first
 * such answer is kept as the session's `stopRequest` until the run that sees it takes it.
 */
import type { CommandHookConfig, HookEvent, HooksConfig } from "../config/hooks_schema.ts";
import { ConfigError } from "../config/errors.ts";
import { hookPolicy } from "../policy/hooks.ts";
import type { ProcessPolicy } from "../policy/process.ts";
import { namedFiles, outsideHookProblem } from "./outside.ts";
import { DEFAULT_HOOK_TIMEOUT_S, type HookRun, runHook } from "./runner.ts";

/** One hook with where it was set, as `deft hooks` lists it. */
export interface HookEntry {
  event: HookEvent;
  matcher?: string;
  hook: CommandHookConfig;
  /** The config file that set it. */
  source?: string;
}

/** Which hook decided: its command (shortened) and its config file. */
export interface HookName {
  name: string;
  source?: string;
}

/** What the PreToolUse hooks said about one call. */
export interface PreToolOutcome {
  /** `undefined`: no hook decided; the ordinary approval applies. */
  decision?: "allow" | "deny" | "ask";
  reason?: string;
  /** The arguments a hook rewrote the call into (still to be checked against the schema). */
  updatedInput?: Record<string, unknown>;
  /** The hook that decided (or rewrote). */
  by?: HookName;
}

/** What PostToolUse or UserPromptSubmit or Stop hooks said: block with a reason, add context. */
export interface HookOutcome {
  block?: { reason: string; by: HookName };
  /** Text for the model. */
  context?: string;
}

/** A `continue: false` answer: the run is to stop, with the hook's `stopReason`. */
export interface HookStop {
  event: HookEvent;
  /** The hook's `stopReason`, or a default sentence. */
  reason: string;
  by: HookName;
}

/**
 * How a conversation started, as SessionStart hooks are told (and their matchers match):
 * `startup` a new session, `resume` one continued (`deft -c`, `-r`, `/resume`, `deft run
 * --continue/--resume`, ACP `session/load`), `clear` after `/clear`, `compact` after `/compact`.
 */
export type SessionStartSource = "startup" | "resume" | "clear" | "compact";

/** The container a session's tools run in, as its hooks are told (they run on the host). */
export interface HookContainer {
  id: string;
  /** `docker` or `podman`: the program that reaches it (`docker exec ID …`). */
  runtime: string;
  /** The workspace inside it, where the tools' paths are. */
  workspace: string;
}

/** Where a session's hooks run and what they are told about it. */
export interface HookContext {
  /**
   * A host folder: hooks start there and see it as `DEFT_PROJECT_DIR`. The workspace, or with a
   * container the folder Deft was started in (the container's files are not on the host).
   */
  cwd: string;
  /** The session's container, when its tools run in one. */
  container?: HookContainer;
  /**
   * The host folder the model writes, which a `sandbox: none` hook may not run or read: `cwd`,
   * or in a container session the container's workspace (a host folder only when Deft bound one
   * there, at the same path).
   */
  modelWorkspace?: string;
  /**
   * The sandbox the hooks run in (all but those that say `sandbox: none`): the session's process
   * policy over `cwd`. Absent: the default sandbox over `cwd` (`workspace-write` where bubblewrap
   * works).
   */
  policy?: ProcessPolicy;
  sessionId?: string;
  transcriptPath?: string;
  /** Tells the user about a hook that failed (one line). */
  report: (text: string) => void;
  /**
   * Shows the user what a hook says for them: its `systemMessage`, the reason of a PreToolUse
   * `allow` or `ask`, the stderr of an exit 2 where the event cannot block. `report` when absent.
   */
  tell?: (text: string) => void;
}

/** Parsed answer of one hook run. */
interface Answer {
  run: HookRun;
  by: HookName;
  /** The JSON object the hook printed on exit 0, if any. */
  json?: Record<string, unknown>;
  /** Exit 2: the hook blocks; the reason is stderr. */
  blocked?: string;
  /** `continue: false`: the run is to stop; the reason is `stopReason`. */
  stop?: string;
  /** Plain stdout of a successful hook (context for the prompt events). */
  plain?: string;
}

const TOOL_EVENTS: ReadonlySet<HookEvent> = new Set(["PreToolUse", "PostToolUse"]);

/** Which field of an event's input its matchers match (the tool events: the tool's name). */
const MATCHED_FIELD: Partial<Record<HookEvent, string>> = {
  SessionStart: "source",
  SessionEnd: "reason",
  PreCompact: "trigger",
  SubagentStart: "agent_type",
  SubagentStop: "agent_type",
};

/** The hooks of a session. */
export class Hooks {
  readonly #entries: readonly HookEntry[];
  readonly #ctx: HookContext;
  #stop?: HookStop;
  #ended = false;

  /**
   * Throws ConfigError when a hook that runs outside the sandbox (`sandbox: none`) would run or
   * read what lies in the workspace (`cwd`): see outside.ts.
   */
  constructor(config: HooksConfig, source: string | undefined, ctx: HookContext) {
    this.#entries = hookEntries(config, source);
    this.#ctx = { ...ctx };
    const refused = this.#entries.flatMap((e) => {
      if (e.hook.sandbox !== "none") return [];
      const workspace = ctx.modelWorkspace ?? ctx.cwd;
      const problem = outsideHookProblem(e.hook.command, workspace, ctx.cwd);
      return problem
        ? [`${e.event} hook '${e.hook.command}' (${e.source ?? "config"}): ${problem}`]
        : [];
    });
    if (refused.length > 0) {
      throw new ConfigError(
        `A hook with \`sandbox: none\` runs outside the sandbox, as you, so it may not run or read ` +
          `what the model can change in the workspace ${ctx.modelWorkspace ?? ctx.cwd}:\n  ${
            refused.join("\n  ")
          }\n` +
          `Keep the program and what it reads outside the workspace (e.g. in ~/.config/deft/hooks/), ` +
          `or drop \`sandbox: none\` so the hook runs inside the sandbox (docs/hooks.md).`,
      );
    }
  }

  /** The sandbox the hooks that do not say `sandbox: none` run in. */
  get policy(): ProcessPolicy {
    return this.#ctx.policy ??= hookPolicy(this.#ctx.cwd);
  }

  /** Names the session's id and trajectory file in the hooks' input from now on. */
  setSession(sessionId: string, transcriptPath: string): void {
    this.#ctx.sessionId = sessionId;
    this.#ctx.transcriptPath = transcriptPath;
  }

  /** Every configured hook, in config order. */
  get entries(): readonly HookEntry[] {
    return this.#entries;
  }

  /** The container the session's tools run in, as the hooks are told. */
  get container(): HookContainer | undefined {
    return this.#ctx.container;
  }

  /** A `continue: false` not yet acted on: the run is to stop. */
  get stopRequest(): HookStop | undefined {
    return this.#stop;
  }

  /** Takes the pending stop request (the run that ends on it). */
  takeStop(): HookStop | undefined {
    const stop = this.#stop;
    this.#stop = undefined;
    return stop;
  }

  /** Whether any hook is configured for `event`. */
  has(event: HookEvent): boolean {
    return this.#entries.some((e) => e.event === event);
  }

  /**
   * PreToolUse: may allow, deny, ask or rewrite the call. `toolUseId` is the model's id of the
   * call (`tool_use_id`, the same in its PostToolUse).
   */
  async preToolUse(
    toolName: string,
    input: Record<string, unknown>,
    toolUseId?: string,
  ): Promise<PreToolOutcome> {
    const answers = await this.#fire("PreToolUse", toolName, {
      tool_name: toolName,
      tool_input: withClaudeNames(toolName, input),
      ...(toolUseId ? { tool_use_id: toolUseId } : {}),
    });
    let outcome: PreToolOutcome = {};
    const rank = { allow: 1, ask: 2, deny: 3 } as const;
    for (const a of answers) {
      let decision: PreToolOutcome["decision"];
      let reason: string | undefined;
      if (a.stop !== undefined) {
        // The run stops, so the call it was about does not run either.
        decision = "deny";
        reason = `it stopped the run: ${a.stop}`;
      } else if (a.blocked !== undefined) {
        decision = "deny";
        reason = a.blocked;
      } else if (a.json) {
        const specific = objectAt(a.json, "hookSpecificOutput");
        const said = specific?.permissionDecision ?? legacyDecision(a.json.decision);
        if (said === "allow" || said === "deny" || said === "ask") {
          decision = said;
          reason = stringAt(specific, "permissionDecisionReason") ?? stringAt(a.json, "reason");
        } else if (said !== undefined) {
          this.#ctx.report(
            `hook ${a.by.name}: unknown permissionDecision ${JSON.stringify(said)}; ignored`,
          );
        }
        const updated = specific?.updatedInput;
        if (updated !== undefined && outcome.updatedInput === undefined) {
          if (isObject(updated)) {
            outcome.updatedInput = fromClaudeNames(toolName, updated, input);
            outcome.by ??= a.by;
          } else {
            // Not an object cannot be a tool's arguments: the call is refused, not run as it was.
            decision = "deny";
            reason = "its updatedInput is not a JSON object";
          }
        }
      }
      if (decision && (!outcome.decision || rank[decision] > rank[outcome.decision])) {
        outcome = { ...outcome, decision, reason, by: a.by };
      }
    }
    if (outcome.decision === "deny") {
      outcome.reason = `PreToolUse hook ${outcome.by?.name} refused the call` +
        (outcome.reason ? `: ${outcome.reason}` : ".");
    } else if (outcome.decision && outcome.reason) {
      // As in Claude Code, an allow's or an ask's reason is for the user, not the model.
      this.#tell(
        `PreToolUse hook ${outcome.by?.name} said ${outcome.decision} for ${toolName}: ` +
          outcome.reason,
      );
    }
    return outcome;
  }

  /** PostToolUse: may block (the reason goes to the model) or add context. */
  async postToolUse(
    toolName: string,
    input: Record<string, unknown>,
    response: unknown,
    toolUseId?: string,
  ): Promise<HookOutcome> {
    const answers = await this.#fire("PostToolUse", toolName, {
      tool_name: toolName,
      tool_input: withClaudeNames(toolName, input),
      tool_response: response,
      ...(toolUseId ? { tool_use_id: toolUseId } : {}),
    });
    return blockOrContext(answers, false);
  }

  /** UserPromptSubmit: may block the prompt or add context (plain stdout counts as context). */
  async userPromptSubmit(prompt: string): Promise<HookOutcome> {
    return blockOrContext(await this.#fire("UserPromptSubmit", undefined, { prompt }), true);
  }

  /**
   * Stop: a `decision: "block"` (or exit 2) keeps the run going, its reason the model's next
   * message. `active` is true when the run already continued because of a Stop hook.
   */
  async stop(active: boolean): Promise<HookOutcome> {
    return blockOrContext(await this.#fire("Stop", undefined, { stop_hook_active: active }), false);
  }

  /**
   * SessionStart: plain stdout or `additionalContext` is context for the model. `source` is how
   * the conversation started, in Claude Code's words (`SessionStartSource`).
   */
  async sessionStart(source: SessionStartSource): Promise<string | undefined> {
    return blockOrContext(await this.#fire("SessionStart", source, { source }), true).context;
  }

  /**
   * PreCompact, before the conversation is compacted: `/compact` (`manual`, with what the user
   * typed after it as `custom_instructions`) or the automatic shortening (`auto`, none). Exit 2
   * or `decision: "block"` keeps the conversation as it is.
   */
  async preCompact(trigger: "manual" | "auto", customInstructions = ""): Promise<HookOutcome> {
    const answers = await this.#fire("PreCompact", trigger, {
      trigger,
      custom_instructions: customInstructions,
    });
    return blockOrContext(answers, false);
  }

  /**
   * SubagentStart, as a `Task` child starts (`agent_type`: its mode, `write` or `read`): an
   * `additionalContext` goes to the child with its task; nothing blocks it.
   */
  async subagentStart(agentId: string, agentType: string): Promise<string | undefined> {
    const fields = { agent_id: agentId, agent_type: agentType };
    return blockOrContext(await this.#fire("SubagentStart", agentType, fields), false).context;
  }

  /**
   * SubagentStop, as a child answers: a block (exit 2 or `decision: "block"`) keeps it going, the
   * reason its next message. `active` is true when it already went on because of one.
   */
  async subagentStop(
    agentId: string,
    agentType: string,
    transcript: string,
    active: boolean,
  ): Promise<HookOutcome> {
    const answers = await this.#fire("SubagentStop", agentType, {
      agent_id: agentId,
      agent_type: agentType,
      agent_transcript_path: transcript,
      stop_hook_active: active,
    });
    return blockOrContext(answers, false);
  }

  /**
   * SessionEnd, once per session: `reason` is Claude Code's (`clear`, `logout`,
   * `prompt_input_exit`, `other`), `deftReason` Deft's own word for how it ended. Nothing a
   * SessionEnd hook answers changes anything; each runs at most `boundSeconds` when given (its
   * own timeout otherwise).
   */
  async sessionEnd(reason: string, deftReason: string, boundSeconds?: number): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    await this.#fire("SessionEnd", reason, { reason, deft_reason: deftReason }, boundSeconds);
  }

  /** Runs the hooks of `event` whose matcher selects `matched` (tool name, source, …). */
  async #fire(
    event: HookEvent,
    matched: string | undefined,
    fields: Record<string, unknown>,
    boundSeconds?: number,
  ): Promise<Answer[]> {
    // As in Claude Code, the same command selected twice (two groups, two config files) runs once.
    const commands = new Set<string>();
    const chosen: HookEntry[] = [];
    for (const e of this.#entries) {
      if (e.event !== event || commands.has(e.hook.command)) continue;
      if (TOOL_EVENTS.has(event) || MATCHED_FIELD[event]) {
        if (!matches(e.matcher, matched ?? "")) continue;
      }
      commands.add(e.hook.command);
      chosen.push(e);
    }
    if (chosen.length === 0) return [];
    const { container } = this.#ctx;
    const input = {
      session_id: this.#ctx.sessionId ?? "",
      transcript_path: this.#ctx.transcriptPath ?? "",
      cwd: this.#ctx.cwd,
      hook_event_name: event,
      ...(container ? { deft_container: { ...container } } : {}),
      ...fields,
    };
    const runs = await Promise.all(chosen.map((e) =>
      runHook(e.hook, input, this.#ctx.cwd, {
        container,
        policy: this.policy,
        visible: e.hook.sandbox === "none" ? undefined : this.#visible(e.hook.command),
        timeoutSeconds: boundSeconds === undefined
          ? undefined
          : Math.min(boundSeconds, e.hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S),
      })
    ));
    return runs.map((run, i) => this.#read(event, chosen[i], run));
  }

  /** What a sandboxed hook is shown read-only: the scripts it names, the transcript. */
  #visible(command: string): string[] {
    const transcript = this.#ctx.transcriptPath;
    const shown = namedFiles(command, this.#ctx.cwd);
    if (transcript && !shown.includes(transcript) && isFile(transcript)) shown.push(transcript);
    return shown;
  }

  #tell(text: string): void {
    (this.#ctx.tell ?? this.#ctx.report)(text);
  }

  #read(event: HookEvent, entry: HookEntry, run: HookRun): Answer {
    const by = hookName(entry);
    const report = (what: string) => this.#ctx.report(`${event} hook ${by.name}: ${what}`);
    if (run.truncated) report(`printed more than it may; its output was cut`);
    if (run.startError !== undefined) {
      report(`could not start (${run.startError}); ignored`);
      return { run, by };
    }
    if (run.timedOut) {
      report(`did not finish in ${run.seconds ?? 60} s; killed, its answer ignored`);
      return { run, by };
    }
    if (run.code === 2) {
      const said = run.stderr.trim();
      if (event === "SessionStart" || event === "SessionEnd" || event === "SubagentStart") {
        // Nothing to block: as in Claude Code, the stderr is shown to the user only.
        this.#tell(`${event} hook ${by.name} exited with status 2${said ? `: ${said}` : ""}`);
        return { run, by };
      }
      return { run, by, blocked: said || `the hook exited with status 2` };
    }
    if (run.code !== 0) {
      const said = run.stderr.trim().split("\n").slice(-1)[0] ?? "";
      report(`failed with status ${run.code}${said ? ` (${said.slice(0, 200)})` : ""}; ignored`);
      return { run, by };
    }
    const text = run.stdout.trim();
    if (text === "") return { run, by };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!isObject(json)) {
      if (event === "UserPromptSubmit" || event === "SessionStart") return { run, by, plain: text };
      report(`answered with something that is not a JSON object; ignored`);
      return { run, by };
    }
    // `systemMessage` is for the user, whatever the event (`suppressOutput` has nothing to hide:
    // Deft never shows a hook's stdout, which is an answer or context for the model).
    const message = stringAt(json, "systemMessage");
    if (message) this.#tell(`${event} hook ${by.name}: ${message}`);
    if (json.continue === false && event !== "SessionEnd") {
      const stop = stringAt(json, "stopReason") ?? "the hook said not to continue";
      this.#stop ??= { event, reason: stop, by };
      return { run, by, json, stop };
    }
    return { run, by, json };
  }
}

/** The configured hooks, flattened in config order. */
export function hookEntries(config: HooksConfig, source?: string): HookEntry[] {
  const out: HookEntry[] = [];
  for (const [event, groups] of Object.entries(config) as [HookEvent, HooksConfig[HookEvent]][]) {
    for (const group of groups ?? []) {
      for (const hook of group.hooks) out.push({ event, matcher: group.matcher, hook, source });
    }
  }
  return out;
}

/** Deft's editor's arguments, and the names Claude Code's Write/Edit give them in a hook's input. */
const EDITOR_FIELDS: readonly (readonly [string, string])[] = [
  ["path", "file_path"],
  ["old_str", "old_string"],
  ["new_str", "new_string"],
  ["file_text", "content"],
];

/**
 * A call's arguments as hooks see them: for the editor (`str_replace_based_edit_tool`), Claude
 * Code's names beside Deft's own (`file_path` beside `path`, `old_string`, `new_string`,
 * `content`), so a hook written for Claude Code's Write/Edit finds the file. The call itself keeps
 * Deft's names.
 */
export function withClaudeNames(
  toolName: string,
  input: Record<string, unknown>,
): Record<string, unknown> {
  if (toolName !== "str_replace_based_edit_tool") return input;
  const out = { ...input };
  for (const [deft, claude] of EDITOR_FIELDS) {
    if (input[deft] !== undefined && !(claude in input)) out[claude] = input[deft];
  }
  return out;
}

/**
 * A hook's rewrite with Claude Code's editor names (echoed back from its input, or its own) in
 * Deft's: a Claude Code name whose value differs from the call's own argument is the rewrite.
 */
function fromClaudeNames(
  toolName: string,
  updated: Record<string, unknown>,
  input: Record<string, unknown>,
): Record<string, unknown> {
  if (toolName !== "str_replace_based_edit_tool") return updated;
  const out = { ...updated };
  for (const [deft, claude] of EDITOR_FIELDS) {
    if (!(claude in out) || claude in input) continue;
    const value = out[claude];
    delete out[claude];
    if (!(deft in out) || value !== input[deft]) out[deft] = value;
  }
  return out;
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/**
 * Whether a group's matcher selects `toolName` (or the source, reason, trigger it matches), as
 * Claude Code reads it: no matcher, `""` and `*` select everything; a matcher of letters,
 * digits, `_`, `-` and `|` only is a list of exact names (`Edit|Write` selects both, not
 * `NotebookEdit`; `bash` not `bash_extra`); anything else is a regular expression that selects
 * the names it finds a match in (`^mcp__github`, `mcp__.*__create`, `Notebook.*`).
 */
export function matches(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  if (/^[A-Za-z0-9_|-]+$/.test(matcher)) return matcher.split("|").includes(toolName);
  try {
    return new RegExp(matcher).test(toolName);
  } catch {
    return false;
  }
}

function hookName(entry: HookEntry): HookName {
  const c = entry.hook.command;
  return { name: `'${c.length > 80 ? c.slice(0, 77) + "..." : c}'`, source: entry.source };
}

function blockOrContext(answers: Answer[], plainIsContext: boolean): HookOutcome {
  const out: HookOutcome = {};
  const contexts: string[] = [];
  for (const a of answers) {
    // `continue: false` stops the run (Hooks.stopRequest): it neither blocks nor adds context.
    if (a.stop !== undefined) continue;
    if (a.blocked !== undefined) {
      out.block ??= { reason: a.blocked, by: a.by };
      continue;
    }
    if (a.json?.decision === "block") {
      out.block ??= { reason: stringAt(a.json, "reason") ?? "blocked by a hook", by: a.by };
    }
    const extra = stringAt(objectAt(a.json, "hookSpecificOutput"), "additionalContext");
    if (extra) contexts.push(extra);
    if (plainIsContext && a.plain) contexts.push(a.plain);
  }
  if (contexts.length > 0) out.context = contexts.join("\n");
  return out;
}

function legacyDecision(value: unknown): string | undefined {
  if (value === "approve") return "allow";
  if (value === "block") return "deny";
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function objectAt(v: unknown, key: string): Record<string, unknown> | undefined {
  if (!isObject(v)) return undefined;
  const inner = v[key];
  return isObject(inner) ? inner : undefined;
}

function stringAt(v: Record<string, unknown> | undefined, key: string): string | undefined {
  const s = v?.[key];
  return typeof s === "string" && s !== "" ? s : undefined;
}
