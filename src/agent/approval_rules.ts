/**
 * The approval rules in force for a session (config/approval_rules.ts reads them) and how a
 * call is matched against them. A deny beats an ask, which beats an allow. A command is split
 * into its parts (`&&`, `||`, `;`, `|`, `&`, subshells, `$(…)`, backticks): an allow covers it
 * only when every part starts with an allowed prefix, and a command that cannot be split for
 * sure (redirections, escapes, a substitution inside quotes) is never covered by an allow. A
 * deny or ask matches when any part, split loosely, starts with its prefix.
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
import { type LoadedConfig, loadUserConfig } from "../config/load.ts";

export type { ApprovalAction, ApprovalRule };

/** The rule (or, for a compound command's allow, the rules) that decided a call. */
export interface RuleMatch {
  action: ApprovalAction;
  /** The rule's text and source; several joined with ` + ` when parts needed several. */
  rule: { text: string; source: string };
}

/** Words a part may start with that only lead into the command that follows. */
const LEADING = new Set([
  "!",
  "if",
  "then",
  "else",
  "elif",
  "do",
  "while",
  "until",
  "time",
  "exec",
  "command",
  "builtin",
  "nohup",
  "env",
  "sudo",
  "xargs",
  "{",
]);

/**
 * The parts of a command, each as its words with quotes removed; undefined when the command
 * cannot be split for sure (then no allow rule covers it).
 */
export function commandParts(command: string): string[][] | undefined {
  const parts: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endPart = () => {
    endWord();
    if (words.length > 0) parts.push(words);
    words = [];
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === "\\" || c === "`" || (c === "$" && "({".includes(command[i + 1] ?? ""))) {
        return undefined;
      } else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      word ??= "";
    } else if (/\s/.test(c) && c !== "\n") endWord();
    else if (";&|()`\n".includes(c)) endPart();
    else if (c === "$" && command[i + 1] === "(") {
      endPart();
      i++;
    } else if ("<>\\".includes(c) || (c === "$" && command[i + 1] === "{")) return undefined;
    else word = (word ?? "") + c;
  }
  if (quote) return undefined;
  endPart();
  return parts;
}

/** The parts of a command split loosely, for deny and ask rules: whatever the syntax. */
function looseParts(command: string): string[][] {
  const strict = commandParts(command);
  const loose = command.split(/[;&|()`\n<>{}]|\$\(/).map((part) =>
    part.split(/\s+/).map((w) => w.replace(/['"\\]/g, "")).filter((w) => w !== "")
  );
  return [...(strict ?? []), ...loose].map(withoutLeading).filter((p) => p.length > 0);
}

/** A part without its leading assignments and keywords (`FOO=1 sudo git push` → `git push`). */
function withoutLeading(words: string[]): string[] {
  let i = 0;
  while (i < words.length && (LEADING.has(words[i]) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]))) {
    i++;
  }
  return words.slice(i);
}

function startsWith(words: string[], prefix: string[]): boolean {
  return prefix.length <= words.length && prefix.every((w, i) => words[i] === w);
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
    const loose = effect?.kind === "command" ? looseParts(effect.command) : [];
    const hits = (rule: ApprovalRule, parts: string[][]): boolean => {
      const p = this.#pattern(rule.text);
      if (!p) return false;
      if (p.kind === "tool") return p.name === toolName;
      if (p.kind === "edit") {
        return effect?.kind === "edit" && editMatches(p.glob, effect.path, workspace);
      }
      return parts.some((words) => startsWith(words, p.words));
    };
    for (const action of ["deny", "ask"] as const) {
      const rule = this.#rules.find((r) => r.action === action && hits(r, loose));
      if (rule) return { action, rule: { text: rule.text, source: rule.source } };
    }
    const allows = this.#rules.filter((r) => r.action === "allow");
    const whole = allows.find((r) => {
      const p = this.#pattern(r.text);
      return p?.kind === "tool" ? p.name === toolName : p?.kind === "edit" && hits(r, []);
    });
    if (whole) return { action: "allow", rule: { text: whole.text, source: whole.source } };
    if (effect?.kind !== "command") return undefined;
    const parts = commandParts(effect.command);
    if (parts === undefined || parts.length === 0) return undefined;
    const used: ApprovalRule[] = [];
    for (const part of parts) {
      const rule = allows.find((r) => hits(r, [part]));
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
    configApprovals: loaded.config.approvals,
    userConfig: user && { path: user.path, approvals: user.config.approvals },
    folder: project,
    rulesFile: options.rulesFile,
    explicitConfig: options.configFile,
  });
  for (const warning of warnings) options.warn(warning);
  return new ApprovalRules(rules, project);
}
