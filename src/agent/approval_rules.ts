/**
 * The approval rules in force for a session (config/approval_rules.ts reads them) and how a
 * call is matched against them. A deny beats an ask, which beats an allow. A command is judged by
 * every command it runs (agent/command_wrappers.ts): each part, whatever separates them, the
 * commands inside substitutions, and what wrappers such as `bash -c`, `env` or `sudo` run. A
 * deny or ask matches when any of them starts with its words; an allow covers the command only
 * when every one of them does, reached with no assignment, change of user or written file. When
 * part of a command cannot be read (a command name in a variable, an `eval` of one), a deny or
 * ask rule that may hide there makes it asked, with a reason saying so.
 */
import { basename, isAbsolute, relative, resolve } from "node:path";
import {
  type ApprovalAction,
  type ApprovalRule,
  loadApprovalRules,
  parseRule,
  type RulePattern,
  saveProjectRule,
} from "../config/approval_rules.ts";
import type { CallEffect } from "../tools/base.ts";
import type { RuleMatch } from "../gate/rules.ts";
import { commandsRun, type Resolved } from "./command_wrappers.ts";
import type { Word } from "./shell_syntax.ts";
import { type LoadedConfig, loadUserConfig } from "../config/load.ts";

export type { ApprovalAction, ApprovalRule };

// The gate's shape of a decision (src/gate/rules.ts), which this rule book fills in.
export type { RuleMatch } from "../gate/rules.ts";

type Hit = "yes" | "maybe" | "no";

/**
 * Whether `words` start with a rule's `prefix`: "maybe" when a word known only at run time stands
 * where the prefix needs one. `byName`: the command's first word counts by its file name too
 * (`/bin/rm` is `rm`), for deny and ask rules; an allow names exactly what it lets run.
 */
function prefixHit(words: Word[], prefix: string[], byName: boolean): Hit {
  for (let i = 0; i < prefix.length; i++) {
    const w = words[i];
    if (w === undefined) return "no";
    // An unquoted `$X` may stand for any number of words: the rest is unknown.
    if (w === null) return "maybe";
    const p = prefix[i];
    const same = w === p ||
      (byName && i === 0 && !p.includes("/") && w.slice(w.lastIndexOf("/") + 1) === p);
    if (!same) return "no";
  }
  return "yes";
}

/** `glob` as a regular expression over a relative path: `*` within a folder, `**` across. */
export function globRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*" && glob[i + 1] === "*") {
      i++;
      if (glob[i + 1] === "/") {
        i++;
        out += "(?:.*/)?";
      } else out += ".*";
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether an edit of `path` matches `glob`: a relative glob against the path relative to the
 * workspace, an absolute one (an "always" answer for an absolute path) against the full path.
 */
function editMatches(glob: string, path: string, workspace: string | undefined): boolean {
  const full = isAbsolute(path) || !workspace ? path : resolve(workspace, path);
  let rel = path;
  if (workspace && isAbsolute(path)) {
    const r = relative(workspace, path);
    if (!r.startsWith("..") && !isAbsolute(r)) rel = r;
  }
  rel = rel.replace(/^\.\//, "");
  if (isAbsolute(glob)) return globRegExp(glob).test(full);
  const re = globRegExp(glob.replace(/^\.\//, ""));
  return re.test(rel) || (!glob.includes("/") && re.test(basename(rel)));
}

/** The rules in force, and the project they are saved for. */
export class ApprovalRules {
  readonly #rules: ApprovalRule[];
  readonly #parsed = new Map<string, RulePattern>();

  /**
   * `project`: the project's real path; "always in this project" answers are saved for it
   * (config/approval_rules.ts), outside the repository.
   */
  constructor(rules: readonly ApprovalRule[] = [], readonly project?: string) {
    this.#rules = [...rules];
  }

  /** The rules in force, strongest first within each source as written. */
  list(): readonly ApprovalRule[] {
    return this.#rules;
  }

  /** Adds a rule for this session only. */
  addSession(action: ApprovalAction, text: string): void {
    this.#rules.push({ action, text, source: "this session", origin: "session" });
  }

  /** Saves an allow rule for the project (and applies it now); returns the file's path. */
  async addProject(action: ApprovalAction, text: string): Promise<string> {
    if (!this.project) throw new Error("no project to save the rule for");
    const path = await saveProjectRule(this.project, action, text);
    if (
      !this.#rules.some((r) => r.origin === "project" && r.text === text && r.action === action)
    ) {
      this.#rules.push({ action, text, source: path, origin: "project" });
    }
    return path;
  }

  #pattern(text: string): RulePattern | undefined {
    let parsed = this.#parsed.get(text);
    if (!parsed) {
      const p = parseRule(text);
      if (typeof p === "string") return undefined;
      parsed = p;
      this.#parsed.set(text, parsed);
    }
    return parsed;
  }

  /**
   * The rule that decides a call of `toolName` doing `effect`, or undefined when none does.
   * `workspace` makes an edit's absolute path relative for the globs.
   */
  match(
    toolName: string,
    effect: CallEffect | undefined,
    workspace?: string,
  ): RuleMatch | undefined {
    const run = effect?.kind === "command" ? commandsRun(effect.command) : undefined;
    const hit = (rule: ApprovalRule): Hit => {
      const p = this.#pattern(rule.text);
      if (!p) return "no";
      if (p.kind === "tool") return p.name === toolName ? "yes" : "no";
      if (p.kind === "fetch") {
        if (effect?.kind !== "fetch" || effect.host === "") return "no";
        return p.host.startsWith("*.")
          ? effect.host.endsWith(p.host.slice(1)) ? "yes" : "no"
          : effect.host === p.host
          ? "yes"
          : "no";
      }
      if (p.kind === "edit") {
        return effect?.kind === "edit" && editMatches(p.glob, effect.path, workspace)
          ? "yes"
          : "no";
      }
      if (!run) return "no";
      const hits = run.commands.map((c) => prefixHit(c.words, p.words, true));
      return hits.includes("yes") ? "yes" : hits.includes("maybe") ? "maybe" : "no";
    };
    const named = (rule: ApprovalRule) => ({ text: rule.text, source: rule.source });
    const strong = this.#rules.filter((r) => r.action === "deny").concat(
      this.#rules.filter((r) => r.action === "ask"),
    );
    const verdicts = strong.map((rule) => ({ rule, hit: hit(rule) }));
    const sure = verdicts.find((v) => v.hit === "yes");
    if (sure) return { action: sure.rule.action, rule: named(sure.rule) };
    if (run) {
      const unsure = this.#unjudged(run, verdicts);
      if (unsure) return unsure;
    }
    const allows = this.#rules.filter((r) => r.action === "allow");
    const whole = allows.find((r) => {
      const p = this.#pattern(r.text);
      return p?.kind !== "command" && hit(r) === "yes";
    });
    if (whole) return { action: "allow", rule: named(whole) };
    if (!run || run.unjudged.length > 0) return undefined;
    const parts = run.commands.filter((c) => !c.wrapper);
    if (parts.length === 0) return undefined;
    const used: ApprovalRule[] = [];
    for (const part of parts) {
      const rule = part.allowable && part.words.length > 0
        ? allows.find((r) => {
          const p = this.#pattern(r.text);
          return p?.kind === "command" && prefixHit(part.words, p.words, false) === "yes";
        })
        : undefined;
      if (!rule) return undefined;
      if (!used.includes(rule)) used.push(rule);
    }
    return {
      action: "allow",
      rule: {
        text: used.map((r) => r.text).join(" + "),
        source: [...new Set(used.map((r) => r.source))].join(" + "),
      },
    };
  }

  /**
   * An ask for a command a deny or ask rule may hide in: a word or part that only the run will
   * know stands where the rule would look. Undefined when no such rule is in force.
   */
  #unjudged(
    run: Resolved,
    verdicts: { rule: ApprovalRule; hit: Hit }[],
  ): RuleMatch | undefined {
    const maybe = verdicts.find((v) => v.hit === "maybe")?.rule;
    const rule = maybe ??
      (run.unjudged.length === 0
        ? undefined
        : verdicts.find((v) => this.#pattern(v.rule.text)?.kind === "command")?.rule);
    if (!rule) return undefined;
    const why = [
      ...(maybe ? [`a word known only when it runs stands where \`${maybe.text}\` looks`] : []),
      ...run.unjudged,
    ];
    return {
      action: "ask",
      rule: { text: rule.text, source: rule.source },
      reason: `Deft could not judge this command against the ${rule.action} rule ` +
        `\`${rule.text}\`: ${why.join("; ")}.`,
      unjudged: rule.action === "deny" ? "deny" : "ask",
    };
  }
}

/**
 * The rules for a session in the project at the real path `project`: the loaded config's (the
 * user's, or a repository's deny/ask with the user's beside), the project's saved ones, and the
 * `--approval-rules` file's. Warnings (a repository's dropped allow rules) go to `warn`.
 */
export async function openApprovalRules(
  loaded: LoadedConfig,
  project: string,
  options: { rulesFile?: string; configFile?: string; warn: (text: string) => void },
): Promise<ApprovalRules> {
  // The user's own lists, when the loaded file is another (a repository's `deft.yaml`).
  const userConfig = loaded.path !== undefined ? await loadUserConfig() : undefined;
  const user = userConfig?.path !== loaded.path ? userConfig : undefined;
  const { rules, warnings } = await loadApprovalRules({
    configPath: loaded.path,
    configLocal: loaded.local,
    configApprovals: loaded.config.approvals,
    userConfig: user && { path: user.path, approvals: user.config.approvals },
    folder: project,
    rulesFile: options.rulesFile,
    explicitConfig: options.configFile,
  });
  for (const warning of warnings) options.warn(warning);
  return new ApprovalRules(rules, project);
}
