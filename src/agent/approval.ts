/**
 * Approvals: before a tool call runs, the user may have to say yes. `never` runs everything;
 * `commands` asks before each bash command except a short list of read-only ones; `all` also asks
 * before every edit (showing the diff with context) and every call of a tool Deft does not know
 * (MCP). A "no" goes back to the model as the tool's error, with the user's reason; "always" stops
 * asking for that command prefix (or that file) for the rest of the session, "session" stops
 * asking at all. While a question is open it owns the screen (the asker's `hold`). Every call's
 * decision comes with its record (`decide`): allowed or denied, and by whom.
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { diffFilesSync } from "../policy/git.ts";
import { defaultSandbox } from "../policy/sandbox.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";
import type { ApprovalDecision } from "../tools/approval_decision.ts";
import type { CallEffect, CommandEffect, EditEffect, Tool } from "../tools/base.ts";
import type { ApprovalRules, RuleMatch } from "./approval_rules.ts";
import { readWorkspaceFile } from "../tools/fs/workspace_read.ts";
import type { RecordedToolResult, Trajectory } from "../trajectory/recorder.ts";
import {
  type CallGate,
  type GateDecision,
  type GateVerdict,
  normalizeToolName,
  RUN_UNASKED,
  type ToolCall,
} from "../tools/executor.ts";

// The modes live in a module of their own (the command line's help lists them without this one).
import { APPROVAL_MODES, type ApprovalMode } from "./approval_modes.ts";
export { APPROVAL_MODES, type ApprovalMode } from "./approval_modes.ts";

/**
 * Asks the user one question; resolves to the answer line, or null when nobody answers. `hold`,
 * when given, takes the screen for the whole exchange (the question, the answers, the decision
 * shown): it stops what else draws there and returns the function that gives the screen back.
 * `tell`, when given, shows the decision taken from the answer (`→ yes`).
 */
export type AskUser = ((question: string) => Promise<string | null>) & {
  hold?: () => () => void;
  tell?: (text: string) => void;
};

/** Whether `value` is an approval mode. */
export function isApprovalMode(value: unknown): value is ApprovalMode {
  return APPROVAL_MODES.includes(value as ApprovalMode);
}

/** What one call needs before it runs. */
interface Request {
  /** What the user sees: the command, or the edit as a diff. */
  show: string;
  /** The key "always" remembers; undefined when "always" is not offered. */
  always?: string;
  alwaysLabel?: string;
  kind: "command" | "edit" | "tool call";
  /** An ask rule asks about it: no earlier "always" covers it. */
  rule?: RuleMatch["rule"];
}

// Commands that only read. Anything with shell syntax beyond a plain pipe is asked about.
const READ_ONLY = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "pwd",
  "echo",
  "which",
  "stat",
  "du",
  "df",
  "whoami",
  "date",
]);
const READ_ONLY_GIT = new Set(["status", "diff", "log", "show"]);
// Options that make a reader write a file or run a program.
const WRITING_OPTION = /^--?(output|ext-diff|textconv|exec|pre\b|o$)/;
const SHELL_SYNTAX = /[;&<>`$(){}\\\n\r]|\|\|/;
// Tools whose first word names a subcommand: "always" covers `git push`, not every git command.
const SUBCOMMAND_TOOLS = new Set([
  "git",
  "npm",
  "npx",
  "pnpm",
  "yarn",
  "deno",
  "cargo",
  "go",
  "docker",
  "kubectl",
  "pip",
  "make",
]);
const SHOWN_LINES = 200;
/** Files larger than this are not read to preview an edit. */
const PREVIEW_BYTES = 1024 * 1024;
/** True where a reader can be run in a read-only sandbox (bubblewrap works here). */
function canRunUnasked(): boolean {
  return defaultSandbox().mode !== "none";
}

/** `path` with its longest existing prefix resolved through symlinks. */
function resolvedPath(path: string): string {
  const rest: string[] = [];
  for (let head = path;; head = dirname(head)) {
    try {
      return join(Deno.realPathSync(head), ...rest);
    } catch {
      if (head === dirname(head)) return path;
      rest.unshift(basename(head));
    }
  }
}

/** Whether `command` only reads: read-only programs, joined at most by plain pipes. */
export function isReadOnlyCommand(command: string): boolean {
  if (SHELL_SYNTAX.test(command)) return false;
  const segments = command.split("|");
  return segments.every((segment) => {
    const words = segment.trim().split(/\s+/).filter((w) => w !== "");
    if (words.length === 0) return false;
    if (words.some((w) => WRITING_OPTION.test(w.replace(/^['"]/, "")))) return false;
    if (words[0] === "git") return READ_ONLY_GIT.has(words[1] ?? "");
    // `date -s`/`--set` sets the clock.
    if (words[0] === "date" && words.some((w) => /^(-[a-zA-Z]*s|--set)/.test(w))) return false;
    return READ_ONLY.has(words[0]);
  });
}

/**
 * The prefix "always" remembers for a plain command: the program, or for a program whose second
 * word names a subcommand (`git push`) the two. Undefined for shell syntax, and for such a
 * program with an option before its subcommand (`git -C . push`): there the subcommand is not
 * where a prefix can tell it, and "always" is not offered.
 */
export function commandPrefix(command: string): string | undefined {
  if (SHELL_SYNTAX.test(command) || command.includes("|")) return undefined;
  const words = command.trim().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0 || /[=]/.test(words[0])) return undefined;
  if (SUBCOMMAND_TOOLS.has(words[0]) && words[1] !== undefined) {
    return words[1].startsWith("-") ? undefined : `${words[0]} ${words[1]}`;
  }
  return words[0];
}

/**
 * Whether "always" for `prefix` covers `command`: the command's own prefix is that one, so
 * "always" for `git push` never covers `git reset --hard`, and "always" for a bare `git` covers
 * no subcommand.
 */
function matchesPrefix(command: string, prefix: string): boolean {
  return commandPrefix(command) === prefix;
}

/** Decides, and asks the user when needed, whether each call may run. */
export class ApprovalGate implements CallGate {
  readonly #always = new Set<string>();
  /** The user answered "session": `never` is theirs from then on, not the configured mode. */
  #sessionOff = false;
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * `workspace` resolves the relative paths of edits (to tell whether they land in `.git`).
   * `inContainer`: the tools run in a container, so paths are the container's (never looked up
   * on the host) and every command is asked (see #request).
   */
  constructor(
    mode: ApprovalMode,
    private readonly ask: AskUser,
    private readonly show: (text: string) => void,
    private readonly workspace?: string,
    private readonly inContainer = false,
    /** The approval rules in force (agent/approval_rules.ts); none when not given. */
    readonly rules?: ApprovalRules,
    /**
     * The command, when it runs where nobody can be asked (`deft run`, `deft serve`) and the user
     * did not pass `--approve-asks`: in mode `never` a call an ask rule or a hook's ask would
     * have asked about is refused, naming the rule or hook, instead of run unasked.
     */
    private readonly nobodyToAsk?: string,
  ) {
    this.#mode = mode;
  }

  #mode: ApprovalMode;

  /** The mode in force; setting it (`/approval`) makes it the user's choice, not "session"'s. */
  get mode(): ApprovalMode {
    return this.#mode;
  }

  set mode(mode: ApprovalMode) {
    this.#mode = mode;
    this.#sessionOff = false;
  }

  /**
   * Null when the call may run; `RUN_UNASKED` when it may run without asking, where it cannot
   * act; else the refusal the model reads. One question at a time.
   */
  async check(tool: Tool, args: Record<string, unknown>): Promise<GateVerdict> {
    return (await this.decide(tool, args)).verdict;
  }

  /** As `check`, with the record of the decision and who made it. */
  decide(tool: Tool, args: Record<string, unknown>): Promise<GateDecision> {
    // What the call does, as the tool's catalog entry says; nothing here reads argument names.
    const effect = tool.effects(args);
    // Rules: a deny refuses in every mode (it is a policy); in `never` nothing else is asked or
    // needs allowing. An ask rule asks even where the mode would not; an allow rule lets through
    // what the mode would ask about.
    const ruled = this.rules?.match(normalizeToolName(tool.name), effect, this.workspace);
    if (ruled?.action === "deny") return Promise.resolve(this.#ruleDenied(effect, ruled));
    if (this.mode === "never") {
      const asked = ruled?.action === "ask" && this.#unanswerable(effect, { rule: ruled.rule });
      return Promise.resolve(asked || this.#unasked());
    }
    if (ruled?.action === "ask") {
      const forced = this.#forcedRequest(tool, args, effect);
      // "always" is not offered: the ask rule would ask again anyway.
      return this.#ask({ ...forced, always: undefined, rule: ruled.rule });
    }
    const request = this.#request(tool, args, effect);
    if ("verdict" in request) return Promise.resolve(request);
    if (ruled?.action === "allow") return Promise.resolve(this.#ruleAllowed(ruled));
    return this.#ask(request);
  }

  /**
   * As `decide` for a call a PreToolUse hook (`hook`) answered `ask` about: asked like a call an
   * ask rule matched (a deny rule still refuses; in `never` it runs unasked, as an ask rule's
   * would, or where nobody can be asked is refused).
   */
  decideAsking(
    tool: Tool,
    args: Record<string, unknown>,
    hook?: { name: string; source?: string },
  ): Promise<GateDecision> {
    const effect = tool.effects(args);
    const ruled = this.rules?.match(normalizeToolName(tool.name), effect, this.workspace);
    if (ruled?.action === "deny") return Promise.resolve(this.#ruleDenied(effect, ruled));
    if (this.mode === "never") {
      const asked = hook && this.#unanswerable(effect, { hook });
      return Promise.resolve(asked || this.#unasked());
    }
    return this.#ask({ ...this.#forcedRequest(tool, args, effect), always: undefined });
  }

  #ruleDenied(effect: CallEffect | undefined, ruled: RuleMatch): GateDecision {
    const what = effect?.kind === "command" ? "command" : effect?.kind === "edit" ? "edit" : "call";
    return {
      verdict: `A deny rule (\`${ruled.rule.text}\`, set in ${ruled.rule.source}) refuses this ` +
        `${what}. It did not run. Do not retry it or work around it; if it is needed, ask the ` +
        `user to run it or to change the rule.`,
      decision: {
        decision: "deny",
        decided_by: "rule",
        mode: this.mode,
        asked: false,
        rule: ruled.rule,
      },
    };
  }

  /**
   * The refusal of a call a rule or hook asks about where nobody can be asked; undefined where
   * someone can (or the user answered "session", or passed `--approve-asks`).
   */
  #unanswerable(
    effect: CallEffect | undefined,
    by: { rule: RuleMatch["rule"] } | { hook: { name: string; source?: string } },
  ): GateDecision | undefined {
    if (this.nobodyToAsk === undefined || this.#sessionOff) return undefined;
    const what = effect?.kind === "command" ? "command" : effect?.kind === "edit" ? "edit" : "call";
    const who = "rule" in by
      ? `The approval rule \`ask ${by.rule.text}\` (set in ${by.rule.source})`
      : `The PreToolUse hook ${by.hook.name}${by.hook.source ? ` (set in ${by.hook.source})` : ""}`;
    const reason = `${who} asks the user before this ${what}, and nobody can be asked here ` +
      `(${this.nobodyToAsk} runs unattended), so it was refused. It did not run. Do not retry ` +
      `it or work around it; if it is needed, say so in your answer: the user can run it, or ` +
      `run Deft again with --approve-asks.`;
    return {
      verdict: reason,
      decision: {
        decision: "deny",
        decided_by: "rule" in by ? "rule" : "hook",
        mode: this.mode,
        asked: false,
        nobody_to_ask: true,
        reason,
        ...by,
      },
    };
  }

  #ruleAllowed(ruled: RuleMatch): GateDecision {
    return {
      verdict: null,
      decision: {
        decision: "allow",
        decided_by: "rule",
        mode: this.mode,
        asked: false,
        rule: ruled.rule,
      },
    };
  }

  /** The question for a call an ask rule matched, whatever the mode would have done. */
  #forcedRequest(
    tool: Tool,
    args: Record<string, unknown>,
    effect: CallEffect | undefined,
  ): Request {
    if (effect?.kind === "command") {
      const prefix = commandPrefix(effect.command);
      return {
        kind: "command",
        show: `$ ${effect.command}`,
        always: prefix === undefined ? undefined : `$ ${prefix}`,
        alwaysLabel: prefix === undefined ? undefined : `\`${prefix}\` commands`,
      };
    }
    if (effect?.kind === "edit") {
      return {
        kind: "edit",
        show: this.#preview(effect) ?? limitLines(effect.summary.split("\n")).join("\n"),
        always: `edit ${effect.path}`,
        alwaysLabel: `edits to ${effect.path}`,
      };
    }
    return {
      kind: "tool call",
      show: `${tool.name} ${clip(JSON.stringify(args))}`,
      always: `tool ${normalizeToolName(tool.name)}`,
      alwaysLabel: `${tool.name} calls`,
    };
  }

  async #ask(request: Request): Promise<GateDecision> {
    const answer = this.#queue.then(() => this.#decide(request));
    this.#queue = answer.catch(() => {});
    return await answer;
  }

  #request(
    tool: Tool,
    args: Record<string, unknown>,
    effect: CallEffect | undefined,
  ): Request | GateDecision {
    if (this.mode === "never") return this.#unasked();
    switch (effect?.kind) {
      case "read":
      case "other":
        return this.#unasked();
      case "command":
        return this.#commandRequest(effect);
      case "edit": {
        // git's own files can make "read-only" git commands run programs, and Deft's config
        // file a later session's hooks: edits there are asked about in `commands` mode too.
        if (this.mode !== "all" && !this.#touchesGit(effect.path)) return this.#unasked();
        const key = `edit ${effect.path}`;
        if (this.#always.has(key)) return this.#covered(key);
        const preview = this.#preview(effect);
        return {
          kind: "edit",
          show: preview ?? limitLines(effect.summary.split("\n")).join("\n"),
          always: key,
          alwaysLabel: `edits to ${effect.path}`,
        };
      }
      default: {
        // A tool that cannot say what its calls do (an MCP server's, a tool without effects in
        // its catalog entry) may run anything: asked about whenever the mode asks at all.
        const key = `tool ${normalizeToolName(tool.name)}`;
        if (this.#always.has(key)) return this.#covered(key);
        return {
          kind: "tool call",
          show: `${tool.name} ${clip(JSON.stringify(args))}`,
          always: key,
          alwaysLabel: `${tool.name} calls`,
        };
      }
    }
  }

  /** Let through by the mode (or by the user's earlier "session", which set it to never). */
  #unasked(sandboxed = false): GateDecision {
    const decidedBy = this.mode === "never" && this.#sessionOff ? "session" : "mode";
    return {
      verdict: sandboxed ? RUN_UNASKED : null,
      decision: {
        decision: "allow",
        decided_by: decidedBy,
        mode: this.mode,
        asked: false,
        ...(sandboxed ? { unasked: true as const } : {}),
      },
    };
  }

  /** Let through by an earlier "always" answer for `key`. */
  #covered(key: string): GateDecision {
    return {
      verdict: null,
      decision: {
        decision: "allow",
        decided_by: "always",
        mode: this.mode,
        asked: false,
        always: key,
      },
    };
  }

  #commandRequest(effect: CommandEffect): Request | GateDecision {
    const command = effect.command;
    // A reader runs unasked only where it cannot act, whatever git or a planted shell function
    // would make of it: by a tool that confines such a call, where a sandbox can run it. Else it
    // is asked like the rest. In a container there is no read-only sandbox to run it in (the
    // container is the boundary, and the workspace is writable there): every command is asked.
    const unasked = effect.confinesUnasked === true && !this.inContainer;
    if (unasked && isReadOnlyCommand(command) && canRunUnasked()) return this.#unasked(true);
    const covering = [...this.#always].find((p) =>
      p.startsWith("$ ") && matchesPrefix(command, p.slice(2))
    );
    if (covering !== undefined) return this.#covered(covering);
    const prefix = commandPrefix(command);
    return {
      kind: "command",
      show: `$ ${command}`,
      always: prefix === undefined ? undefined : `$ ${prefix}`,
      alwaysLabel: prefix === undefined ? undefined : `\`${prefix}\` commands`,
    };
  }

  /**
   * Whether an edit lands in git's own files (`.git/…`, `.gitattributes`, `.gitmodules`) or in
   * Deft's config file of a folder (`deft.yaml`, `trae_config.yaml`: in a trusted folder it sets
   * hooks and MCP servers, programs started outside the sandbox), by the path as written and by
   * where it resolves: a symlink `g -> .git` makes `g/config` git's.
   */
  #touchesGit(path: string): boolean {
    const full = isAbsolute(path) ? path : resolve(this.workspace ?? Deno.cwd(), path);
    // A container path means nothing on the host: judged as written (no command runs unasked
    // there, so a symlink to .git cannot make a reader run git's programs).
    return [path, this.inContainer ? full : resolvedPath(full)].some((p) =>
      p.split("/").some((part) =>
        part === ".git" || /^\.git(attributes|modules)$/.test(part) ||
        // Deft's own config in a folder: trusted, it sets hooks that run outside the sandbox.
        part === "deft.yaml" || part === "trae_config.yaml"
      )
    );
  }

  /**
   * The edit as it would change the file, or undefined (then its summary is shown). In a
   * container the path is the container's: the host's file at that path is not the one edited,
   * so nothing is read.
   */
  #preview(effect: EditEffect): string | undefined {
    if (this.inContainer || !effect.after) return undefined;
    // Only a regular file inside the workspace, read pinned: its lines reach the terminal, so a
    // file outside must not, whatever the path or a link swapped in says.
    const bytes = readWorkspaceFile(this.workspace ?? Deno.cwd(), effect.path, PREVIEW_BYTES);
    if (bytes === undefined) return undefined;
    let before: string | null = null;
    if (bytes !== null) {
      try {
        before = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        return undefined;
      }
    }
    return editPreview(effect, before);
  }

  async #decide(request: Request): Promise<GateDecision> {
    // An earlier answer ("always", "session") may cover this one by now.
    if (this.mode === "never") return this.#unasked();
    if (!request.rule && request.always && this.#always.has(request.always)) {
      return this.#covered(request.always);
    }
    const release = this.ask.hold?.() ?? (() => {});
    try {
      return await this.#question(request);
    } finally {
      release();
    }
  }

  /**
   * Where an "always" answer holds: this session, or (when the gate knows its project) this
   * project, saved as an allow rule. `rest` is what followed the `a` (`a p`); else asked. Null
   * when nobody answers.
   */
  async #alwaysWhere(key: string, rest: string): Promise<"session" | "project" | null> {
    if (!this.rules?.project) return "session";
    const pick = (text: string) => {
      const head = text.trim().toLowerCase();
      if (/^(p|project)\b/.test(head)) return "project" as const;
      if (head === "" || /^(s|session)\b/.test(head)) return "session" as const;
      return undefined;
    };
    const inline = rest.trim() === "" ? undefined : pick(rest);
    if (inline) return inline;
    this.show(
      `Always allow \`${visible(key)}\`: [s] this session only (Enter) · [p] this project ` +
        `(saved as the rule \`allow ${visible(key)}\`, kept outside the repository)`,
    );
    for (;;) {
      const line = await this.ask("always> ");
      if (line === null) return null;
      const where = pick(line);
      if (where) return where;
      this.show("Please answer s (this session) or p (this project).");
    }
  }

  async #question(request: Request): Promise<GateDecision> {
    const mode = this.mode;
    const user = (
      answer: ApprovalDecision["answer"] & string,
      refused?: string,
      extra: Partial<ApprovalDecision> = {},
    ): GateDecision => ({
      verdict: refused === undefined ? null : refusal(request, refused),
      decision: {
        decision: refused === undefined ? "allow" : "deny",
        decided_by: "user",
        mode,
        asked: true,
        answer,
        ...extra,
        ...(refused ? { reason: refused } : {}),
      },
    });
    const choices = [
      "[y]es",
      `[n]o, with a reason for the model ("n use the test script")`,
      ...(request.always
        ? [
          `[a]lways for ${visible(request.alwaysLabel ?? "")}${
            this.rules?.project ? " (this session or this project)" : ""
          }`,
        ]
        : []),
      "[s]ession: ask nothing more in this session",
    ].join(" · ");
    const tell = (text: string) => this.ask.tell?.(text);
    // The file's lines around an edit can hold a key: masked as the trajectory masks it.
    const asking = request.rule
      ? `\n(asked by the rule \`ask ${visible(request.rule.text)}\` from ${
        visible(request.rule.source)
      })`
      : "";
    this.show(
      `\nApprove this ${request.kind}?${asking}\n${maskOutput(visible(request.show))}\n${choices}`,
    );
    for (;;) {
      const line = await this.ask("approve> ");
      if (line === null) {
        tell("→ no answer: not run");
        return user("none", "no answer (the prompt was closed or interrupted)");
      }
      const answer = line.trim();
      const word = /^([a-z]+)\b[\s:,.-]*(.*)$/is.exec(answer);
      const head = word?.[1].toLowerCase() ?? "";
      if (head === "y" || head === "yes") {
        tell("→ yes");
        return user("yes");
      }
      if ((head === "a" || head === "always") && request.always) {
        // No answer to "where" (the prompt closed, or an asker that only answers approval
        // questions, such as an ACP client's "always allow"): the yes stands, for this session.
        const where = await this.#alwaysWhere(request.always, word?.[2] ?? "") ?? "session";
        this.#always.add(request.always);
        if (where === "project" && this.rules) {
          try {
            const file = await this.rules.addProject("allow", request.always);
            tell(
              `→ yes, and always in this project: saved the rule \`allow ${
                visible(request.always)
              }\` (${visible(file)}; \`deft approvals\` lists and removes it)`,
            );
            return user("always", undefined, {
              always: request.always,
              rule: { text: request.always, source: file },
            });
          } catch (e) {
            this.show(
              `Could not save the rule for this project (${
                (e as Error).message
              }); it holds for this session only.`,
            );
          }
        }
        tell(`→ yes, and to ${visible(request.alwaysLabel ?? "")} for the rest of the session`);
        return user("always", undefined, { always: request.always });
      }
      if (head === "s" || head === "session") {
        this.mode = "never";
        this.#sessionOff = true;
        tell("→ yes, and to every call for the rest of the session (approval: never)");
        return user("session");
      }
      if (head === "n" || head === "no") {
        const reason = word?.[2].trim() ?? "";
        tell(`→ no${reason ? `; the model is told: ${visible(reason)}` : ""}`);
        return user("no", reason);
      }
      this.show(
        `Please answer y, n (with an optional reason)${request.always ? ", a" : ""} or s.`,
      );
    }
  }
}

/**
 * The gate of a replay (`deft run --replay`): the recording's decisions again, asking nobody. A
 * call the recording refused is refused with the same words, so the replay follows the same
 * path; a reader that ran unasked runs unasked again; any other call runs.
 */
export class ReplayGate implements CallGate {
  readonly #recorded = new Map<string, RecordedToolResult>();

  constructor(recording: Trajectory) {
    for (const step of recording.agent_steps) {
      for (const r of step.tool_results ?? []) this.#recorded.set(r.call_id, r);
    }
  }

  async check(tool: Tool, args: Record<string, unknown>, call?: ToolCall): Promise<GateVerdict> {
    return (await this.decide(tool, args, call)).verdict;
  }

  decide(_tool: Tool, _args: Record<string, unknown>, call?: ToolCall): Promise<GateDecision> {
    const recorded = call ? this.#recorded.get(call.call_id) : undefined;
    const approval = recorded?.approval;
    const decision: ApprovalDecision = {
      decision: approval?.decision === "deny" ? "deny" : "allow",
      decided_by: "recording",
      mode: approval?.mode ?? "never",
      asked: false,
      ...(approval?.unasked ? { unasked: true as const } : {}),
      ...(approval?.reason ? { reason: approval.reason } : {}),
    };
    const verdict = approval?.decision === "deny"
      ? recorded?.error ?? "The user denied this call when it was recorded. It did not run."
      : approval?.unasked && canRunUnasked()
      ? RUN_UNASKED
      : null;
    return Promise.resolve({ verdict, decision });
  }
}

/**
 * The text with control characters and bidirectional overrides spelled out, so a command cannot
 * disguise itself on the terminal (a carriage return or an escape sequence that redraws the line).
 */
export function visible(text: string): string {
  return terminalText(text, { style: "escape" });
}

function refusal(request: Request, reason: string): string {
  return `The user denied this ${request.kind}${reason ? `: ${reason}` : "."} It did not run. ` +
    `Do not repeat it unchanged; take the reason into account or ask the user how to proceed.`;
}

/**
 * The edit as it would change the file: a unified diff with three lines of context around each
 * change, headed by the path. Undefined when the edit would not apply as given (the editor
 * refuses it then; the request is shown as written).
 */
function editPreview(effect: EditEffect, before: string | null): string | undefined {
  const path = effect.path;
  const after = effect.after?.(before);
  if (after === undefined) return undefined;
  const dir = Deno.makeTempDirSync({ prefix: "deft-approve-" });
  try {
    Deno.writeTextFileSync(join(dir, "before"), before ?? "");
    Deno.writeTextFileSync(join(dir, "after"), after);
    const diff = diffFilesSync(join(dir, "before"), join(dir, "after"), 3);
    const lines = diff.split("\n");
    const hunk = lines.findIndex((l) => l.startsWith("@@"));
    if (hunk < 0) return `${path}: no change`;
    const head = before !== null ? [`--- ${path}`, `+++ ${path}`] : [`+++ ${path} (new file)`];
    return [...head, ...limitLines(lines.slice(hunk))].join("\n").trimEnd();
  } catch {
    return undefined;
  } finally {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* a leftover temp folder is harmless */ }
  }
}

function limitLines(lines: string[]): string[] {
  if (lines.length <= SHOWN_LINES) return lines;
  return [...lines.slice(0, SHOWN_LINES), `… ${lines.length - SHOWN_LINES} more line(s)`];
}

function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}
