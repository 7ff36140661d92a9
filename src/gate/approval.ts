/**
 * The approval gate: the lasting rules and the approval mode, and the user's answers. `never`
 * runs everything; `commands` asks before each bash command except a short list of read-only
 * ones; `all` also asks before every edit (showing the diff with context) and every call of a
 * tool Deft does not know (MCP). A deny rule refuses in every mode; an ask rule (or a hook's ask)
 * asks even where the mode would not, and where nobody can be asked refuses; an allow rule lets
 * through what the mode would ask about. A "no" goes back to the model as the tool's error, with
 * the user's reason; "always" stops asking for that command prefix (or that file) for the rest of
 * the session, "session" stops asking at all. One question at a time. Every decision comes with
 * its record: allowed or denied, and by whom. The pipeline (pipeline.ts) puts the hooks in
 * front of it.
 */
import type { CallEffect, CommandEffect, EditEffect, FetchEffect, Tool } from "../tools/base.ts";
import { parseRule } from "../config/approval_rules.ts";
import { describeCall } from "../tools/catalog.ts";
import {
  type CallGate,
  type GateDecision,
  type GateVerdict,
  normalizeToolName,
  RUN_UNASKED,
} from "../tools/executor.ts";
import {
  afterCd,
  canRunUnasked,
  commandPrefix,
  isReadOnlyCommand,
  matchesPrefix,
} from "./commands.ts";
import type { ApprovalMode } from "./modes.ts";
import { callAsMade, showCommand, showEdit, touchesGit } from "./preview.ts";
import { type Asker, type AskUser, question, type Request } from "./question.ts";
import type { RuleBook, RuleMatch } from "./rules.ts";

/** Who asks about a call whatever the mode: an ask rule, or a PreToolUse hook's `ask`. */
export type AskedBy =
  | { rule: RuleMatch["rule"]; unjudged?: string }
  | { hook: { name: string; source?: string } };

/** Decides, and asks the user when needed, whether each call may run. */
export class ApprovalGate implements CallGate, Asker {
  readonly #always = new Set<string>();
  /** The user answered "session": `never` is theirs from then on, not the configured mode. */
  #sessionOff = false;
  #queue: Promise<unknown> = Promise.resolve();
  #mode: ApprovalMode;

  /**
   * `workspace` resolves the relative paths of edits (to tell whether they land in `.git`).
   * `inContainer`: the tools run in a container, so paths are the container's (never looked up
   * on the host) and every command is asked (see #commandRequest).
   */
  constructor(
    mode: ApprovalMode,
    readonly ask: AskUser,
    readonly show: (text: string) => void,
    private readonly workspace?: string,
    private readonly inContainer = false,
    /** The approval rules in force (agent/approval_rules.ts); none when not given. */
    readonly rules?: RuleBook,
    /**
     * The command, when it runs where nobody can be asked (`deft run`, `deft serve`) and the user
     * did not pass `--approve-asks`: in mode `never` a call an ask rule or a hook's ask would
     * have asked about is refused, naming the rule or hook, instead of run unasked.
     */
    private readonly nobodyToAsk?: string,
  ) {
    this.#mode = mode;
  }

  /** The mode in force; setting it (`/approval`) makes it the user's choice, not "session"'s. */
  get mode(): ApprovalMode {
    return this.#mode;
  }

  set mode(mode: ApprovalMode) {
    this.#mode = mode;
    this.#sessionOff = false;
  }

  remember(key: string): void {
    this.#always.add(key);
  }

  stopAsking(): void {
    this.mode = "never";
    this.#sessionOff = true;
  }

  /**
   * Null when the call may run; `RUN_UNASKED` when it may run without asking, where it cannot
   * act; else the refusal the model reads.
   */
  async check(tool: Tool, args: Record<string, unknown>): Promise<GateVerdict> {
    return (await this.decide(tool, args)).verdict;
  }

  /** The rules, then the mode: the decision on a call, with its record. */
  decide(tool: Tool, args: Record<string, unknown>): Promise<GateDecision> {
    // What the call does, as the tool's catalog entry says; nothing here reads argument names.
    const effect = tool.effects(args);
    const ruled = this.ruleOn(tool, effect);
    if (ruled?.action === "deny") return Promise.resolve(this.ruleDenied(effect, ruled));
    return this.byMode(tool, args, effect, ruled);
  }

  /**
   * As `decide` for a call a PreToolUse hook (`hook`) answered `ask` about: asked like a call an
   * ask rule matched (a deny rule still refuses).
   */
  decideAsking(
    tool: Tool,
    args: Record<string, unknown>,
    hook: { name: string; source?: string },
  ): Promise<GateDecision> {
    const effect = tool.effects(args);
    const ruled = this.ruleOn(tool, effect);
    if (ruled?.action === "deny") return Promise.resolve(this.ruleDenied(effect, ruled));
    return this.byMode(tool, args, effect, ruled, { hook });
  }

  /** The lasting rule that decides a call doing `effect`, if one does. */
  ruleOn(tool: Tool, effect: CallEffect | undefined): RuleMatch | undefined {
    const name = normalizeToolName(tool.name);
    const ruled = this.rules?.match(name, effect, this.workspace);
    if (ruled || effect?.kind !== "command") return ruled;
    // `cd DIR && COMMAND` within the workspace: an allow rule for COMMAND (what "always in this
    // project" saves for it) covers it; no deny or ask rule matched any part of it.
    const rest = afterCd(effect.command, this.workspace);
    if (rest === undefined) return undefined;
    const inner = this.rules?.match(name, { ...effect, command: rest }, this.workspace);
    return inner?.action === "allow" ? inner : undefined;
  }

  /** The refusal by a deny rule: in every mode (it is a policy), nobody asked. */
  ruleDenied(effect: CallEffect | undefined, ruled: RuleMatch): GateDecision {
    return {
      verdict: `A deny rule (\`${ruled.rule.text}\`, set in ${ruled.rule.source}) refuses this ` +
        `${what(effect)}. It did not run. Do not retry it or work around it; if it is needed, ` +
        `ask the user to run it or to change the rule.`,
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
   * The approval mode's decision on a call no deny rule refused. An ask rule (`ruled`) or a
   * hook's ask (`hook`) has the user asked even where the mode would not, without an "always"
   * covering it; in `never` nothing is asked: such a call runs unasked, or where nobody can be
   * asked is refused. An allow rule lets through what the mode would ask about.
   */
  byMode(
    tool: Tool,
    args: Record<string, unknown>,
    effect: CallEffect | undefined,
    ruled: RuleMatch | undefined,
    hook?: { hook: { name: string; source?: string } },
  ): Promise<GateDecision> {
    const asks: AskedBy | undefined = hook ??
      (ruled?.action === "ask"
        ? { rule: ruled.rule, ...(ruled.reason ? { unjudged: ruled.reason } : {}) }
        : undefined);
    if (this.mode === "never") {
      // A command a deny rule may hide in is never let through unasked: a deny is a policy.
      if (ruled?.unjudged === "deny") {
        return Promise.resolve(this.#hiddenDeny(effect, ruled));
      }
      return Promise.resolve((asks && this.#unanswerable(effect, asks)) || this.#unasked());
    }
    if (asks) {
      // "always" is not offered: the rule or hook would ask again anyway.
      const forced = this.#forcedRequest(tool, args, effect);
      return this.#ask({ ...forced, always: undefined, ...("rule" in asks ? asks : {}) });
    }
    const request = this.#request(tool, args, effect);
    if ("verdict" in request) return Promise.resolve(request);
    if (ruled?.action === "allow") return Promise.resolve(this.#ruleAllowed(ruled));
    return this.#ask(request);
  }

  /**
   * The refusal of a call a rule or hook asks about where nobody can be asked; undefined where
   * someone can (or the user answered "session", or passed `--approve-asks`).
   */
  #unanswerable(effect: CallEffect | undefined, by: AskedBy): GateDecision | undefined {
    if (this.nobodyToAsk === undefined || this.#sessionOff) return undefined;
    const who = "rule" in by
      ? by.unjudged
        ? `${by.unjudged} So it`
        : `The approval rule \`ask ${by.rule.text}\` (set in ${by.rule.source})`
      : `The PreToolUse hook ${by.hook.name}${by.hook.source ? ` (set in ${by.hook.source})` : ""}`;
    const reason = `${who} asks the user before this ${what(effect)}, and nobody can be asked ` +
      `here (${this.nobodyToAsk} runs unattended), so it was refused. It did not run. Do not ` +
      `retry it or work around it; if it is needed, say so in your answer: the user can run ` +
      `it, or run Deft again with --approve-asks.`;
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

  /** The refusal, in mode `never`, of a command a deny rule may hide in (`ruled.reason`). */
  #hiddenDeny(effect: CallEffect | undefined, ruled: RuleMatch): GateDecision {
    const reason = `${ruled.reason} In approval mode never nobody is asked, so this ` +
      `${what(effect)} was refused. It did not run. Write the command so each program it runs ` +
      `is named plainly, or ask the user to run it.`;
    return {
      verdict: reason,
      decision: {
        decision: "deny",
        decided_by: "rule",
        mode: this.mode,
        asked: false,
        rule: ruled.rule,
        reason,
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
    if (effect?.kind === "command") return commandQuestion(tool, args, effect);
    if (effect?.kind === "edit") return this.#editQuestion(tool, args, effect);
    return toolQuestion(tool, args);
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
    switch (effect?.kind) {
      case "read":
      case "other":
        return this.#unasked();
      case "command":
        return this.#commandRequest(tool, args, effect);
      case "edit": {
        // git's own files can make "read-only" git commands run programs, and Deft's config
        // file a later session's hooks: edits there are asked about in `commands` mode too.
        if (this.mode !== "all" && !touchesGit(effect.path, this.workspace, this.inContainer)) {
          return this.#unasked();
        }
        const request = this.#editQuestion(tool, args, effect);
        return this.#always.has(request.always!) ? this.#covered(request.always!) : request;
      }
      case "fetch": {
        const request = fetchQuestion(tool, args, effect);
        const key = request.always;
        return key && this.#always.has(key) ? this.#covered(key) : request;
      }
      default: {
        // A tool that cannot say what its calls do (an MCP server's, a tool without effects in
        // its catalog entry) may run anything: asked about whenever the mode asks at all.
        const request = toolQuestion(tool, args);
        return this.#always.has(request.always!) ? this.#covered(request.always!) : request;
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

  #commandRequest(
    tool: Tool,
    args: Record<string, unknown>,
    effect: CommandEffect,
  ): Request | GateDecision {
    const command = effect.command;
    // A reader runs unasked only where it cannot act, whatever git or a planted shell function
    // would make of it: by a tool that confines such a call, where a sandbox can run it. Else it
    // is asked like the rest. In a container there is no read-only sandbox to run it in (the
    // container is the boundary, and the workspace is writable there): every command is asked.
    const unasked = effect.confinesUnasked === true && !this.inContainer;
    if (unasked && isReadOnlyCommand(command) && canRunUnasked()) return this.#unasked(true);
    const covering = [...this.#always].find((p) =>
      p.startsWith("$ ") && matchesPrefix(command, p.slice(2), this.workspace)
    );
    if (covering !== undefined) return this.#covered(covering);
    return commandQuestion(tool, args, effect, this.workspace);
  }

  /**
   * The question about an edit: shown by the call's description (its diff), the file read
   * pinned inside the workspace; "always" covers the file the edit changes.
   */
  #editQuestion(tool: Tool, args: Record<string, unknown>, effect: EditEffect): Request {
    const shown = showEdit(
      describeCall(tool.name, args, effect),
      { name: tool.name, args },
      this.workspace,
      this.inContainer,
    );
    return {
      kind: "edit",
      show: shown,
      always: `edit ${effect.path}`,
      alwaysLabel: `edits to ${effect.path}`,
    };
  }

  async #decide(request: Request): Promise<GateDecision> {
    // An earlier answer ("always", "session") may cover this one by now.
    if (this.mode === "never") return this.#unasked();
    if (!request.rule && request.always && this.#always.has(request.always)) {
      return this.#covered(request.always);
    }
    const release = this.ask.hold?.() ?? (() => {});
    try {
      return await question(this, request);
    } finally {
      release();
    }
  }
}

/**
 * The question about a command line, shown by the call's description; "always" covers the
 * prefix of the command the call runs (`effect`), when it has one.
 */
function commandQuestion(
  tool: Tool,
  args: Record<string, unknown>,
  effect: CommandEffect,
  workspace?: string,
): Request {
  const prefix = commandPrefix(effect.command, workspace);
  return {
    kind: "command",
    show: showCommand(describeCall(tool.name, args, effect)),
    always: prefix === undefined ? undefined : `$ ${prefix}`,
    alwaysLabel: prefix === undefined ? undefined : `\`${prefix}\` commands`,
  };
}

/**
 * The question about a fetch: shown as the call was made; "always" covers that host only (the
 * rule `fetch HOST`), never the tool, so an answer for one site lets no other through. A URL
 * whose host no rule can name (none, an IPv6 literal) gets no "always".
 */
function fetchQuestion(tool: Tool, args: Record<string, unknown>, effect: FetchEffect): Request {
  const rule = `fetch ${effect.host}`;
  const nameable = effect.host !== "" && typeof parseRule(rule) !== "string";
  return {
    kind: "fetch",
    show: callAsMade(tool.name, args),
    always: nameable ? rule : undefined,
    alwaysLabel: nameable ? `fetches from ${effect.host}` : undefined,
  };
}

/** The question about a call of a tool that cannot say what it does: the call as made. */
function toolQuestion(tool: Tool, args: Record<string, unknown>): Request {
  return {
    kind: "tool call",
    show: callAsMade(tool.name, args),
    always: `tool ${normalizeToolName(tool.name)}`,
    alwaysLabel: `${tool.name} calls`,
  };
}

/** A call's effect in a word, for the model's refusal. */
function what(effect: CallEffect | undefined): string {
  return effect?.kind === "command" ? "command" : effect?.kind === "edit" ? "edit" : "call";
}
