/**
 * Approval rules that last: `allow`, `ask` and `deny` lists of rule texts, read from the user's
 * config (`approvals:`), from a per-project file Deft keeps outside the repository (keyed by the
 * project's real path; an "always in this project" answer lands there), from a repository's own
 * `deft.yaml` (its `deny` and `ask` only: a repository may tighten, never loosen), and from a
 * policy file given with `--approval-rules`. A rule text is one of
 *
 * - `$ WORDS`: a command whose words start with WORDS (`$ git push`, `$ npm run test`);
 * - `edit GLOB`: an edit of a path matching GLOB (`*` within a folder, `**` across folders);
 * - `tool NAME`: any call of the tool NAME (`tool bash`, `tool mcp__github__create_issue`);
 * - `fetch HOST`: a `web_fetch` of a URL on HOST (`fetch docs.example.com`), or on any name below a
 *   domain (`fetch *.example.com`, not `example.com` itself); any scheme and port.
 *
 * Matching a call against the rules lives with the gate (agent/approval_rules.ts).
 */
import { dirname, join } from "node:path";
import { isMap, loadYaml, parseDocument } from "./yaml.ts";
import { z } from "zod";
import { ConfigError } from "./errors.ts";
import { readConfigFile } from "./read.ts";
import { configCandidates } from "./locate.ts";
import { userConfigPath } from "./trust.ts";

/** What a rule does to the calls it matches. */
export type ApprovalAction = "allow" | "ask" | "deny";

/** The actions, strongest first: a deny beats an ask, which beats an allow. */
export const APPROVAL_ACTIONS: readonly ApprovalAction[] = ["deny", "ask", "allow"];

/** Where a rule was set. */
export type RuleOrigin = "user" | "project" | "repository" | "file" | "session";

/** One rule in force. */
export interface ApprovalRule {
  action: ApprovalAction;
  /** The rule as written (`$ git push`). */
  text: string;
  /** Where it was set: a file's path, or `this session`. */
  source: string;
  origin: RuleOrigin;
}

/** A rule text, parsed. */
export type RulePattern =
  | { kind: "command"; words: string[] }
  | { kind: "edit"; glob: string }
  | { kind: "tool"; name: string }
  | { kind: "fetch"; host: string };

/** The rule text parsed, or a message saying what is wrong with it. */
export function parseRule(text: string): RulePattern | string {
  const trimmed = text.trim();
  const command = /^\$\s+(.+)$/s.exec(trimmed);
  if (command) {
    const words = command[1].split(/\s+/).filter((w) => w !== "");
    if (words.some((w) => /[;&|<>()`$\\'"]/.test(w))) {
      return `'${text}': a command rule is plain words (a prefix such as '$ git push'), ` +
        `without shell syntax or quotes`;
    }
    return { kind: "command", words };
  }
  const edit = /^edit\s+(.+)$/s.exec(trimmed);
  if (edit) return { kind: "edit", glob: edit[1].trim() };
  const tool = /^tool\s+(\S+)$/.exec(trimmed);
  if (tool) return { kind: "tool", name: tool[1] };
  const fetch = /^fetch\s+(\S+)$/.exec(trimmed);
  if (fetch) {
    const host = fetch[1].toLowerCase();
    if (!/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host)) {
      return `'${text}': a fetch rule names a host (docs.example.com) or every name below a ` +
        "domain (*.example.com), without a scheme, port or path";
    }
    return { kind: "fetch", host };
  }
  return `'${text}' is not a rule: write '$ COMMAND PREFIX', 'edit PATH-GLOB', 'tool NAME' or ` +
    "'fetch HOST'";
}

const ruleText = z.string().superRefine((text, ctx) => {
  const parsed = parseRule(text);
  if (typeof parsed === "string") ctx.addIssue({ code: "custom", message: parsed });
});

/** The `approvals:` key of a config file (and the shape of an `--approval-rules` file). */
export const approvalsSchema = z.strictObject({
  allow: z.array(ruleText).optional(),
  ask: z.array(ruleText).optional(),
  deny: z.array(ruleText).optional(),
});

/** The `approvals:` lists as written. */
export type ApprovalLists = z.output<typeof approvalsSchema>;

/** The rules of `lists`, each with its source. */
export function rulesOf(
  lists: ApprovalLists | undefined,
  source: string,
  origin: RuleOrigin,
): ApprovalRule[] {
  if (!lists) return [];
  return APPROVAL_ACTIONS.flatMap((action) =>
    (lists[action] ?? []).map((text) => ({ action, text: text.trim(), source, origin }))
  );
}

/**
 * The file holding every project's rules, outside any repository: beside the user config
 * (`~/.config/deft/project_approvals.yaml`), a mapping from a project's real path to its lists.
 */
export function projectRulesPath(): string | undefined {
  const user = userConfigPath();
  return user ? join(dirname(user), "project_approvals.yaml") : undefined;
}

async function readProjectFile(path: string): Promise<Record<string, ApprovalLists>> {
  let text: string;
  try {
    text = await readConfigFile(path);
  } catch (e) {
    // Like the user config: a file Deft may not read (narrowed --allow-read) counts as absent.
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable) return {};
    throw e;
  }
  await loadYaml();
  const doc = parseDocument(text);
  if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents))) {
    throw new ConfigError(
      `${path}: not a YAML mapping of project folders to approval rules; fix it or remove it.`,
    );
  }
  const data = (doc.toJS() ?? {}) as Record<string, unknown>;
  const out: Record<string, ApprovalLists> = {};
  for (const [folder, lists] of Object.entries(data)) {
    const checked = approvalsSchema.safeParse(lists);
    if (!checked.success) {
      throw new ConfigError(
        `${path}: the rules for ${folder} are not valid (${
          checked.error.issues[0]?.message ?? "wrong shape"
        }); fix the file, or remove them with \`deft approvals remove\`.`,
      );
    }
    out[folder] = checked.data;
  }
  return out;
}

/** The rules saved for the project at the real path `folder`. */
export async function projectRules(folder: string): Promise<ApprovalRule[]> {
  const path = projectRulesPath();
  if (!path) return [];
  const all = await readProjectFile(path);
  return rulesOf(all[folder], path, "project");
}

/**
 * Adds (or with `remove`, takes away) one rule of the project at the real path `folder`, read
 * again just before writing, and written whole to a temporary file renamed over the old one, so
 * two sessions saving at once never leave half a file. Returns the file's path.
 */
export async function saveProjectRule(
  folder: string,
  action: ApprovalAction,
  text: string,
  remove = false,
): Promise<string> {
  const path = projectRulesPath();
  if (!path) {
    throw new ConfigError("Cannot find the user config folder: set HOME or XDG_CONFIG_HOME.");
  }
  const all = await readProjectFile(path);
  const lists = all[folder] ?? {};
  const current = lists[action] ?? [];
  const next = remove ? current.filter((t) => t !== text) : [...new Set([...current, text])];
  lists[action] = next;
  if (next.length === 0) delete lists[action];
  if (Object.keys(lists).length === 0) delete all[folder];
  else all[folder] = lists;
  await Deno.mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${Deno.pid}.tmp`;
  await loadYaml();
  const doc = parseDocument("{}");
  doc.contents = doc.createNode(all) as typeof doc.contents;
  await Deno.writeTextFile(
    temp,
    '# Deft\'s approval rules per project (an "always in this project" answer; ' +
      "`deft approvals`).\n" + doc.toString(),
  );
  await Deno.rename(temp, path);
  return path;
}

/**
 * Removes one rule from the user's config file (keeping its comments and layout). Returns the
 * file's path.
 */
export async function removeUserRule(
  path: string,
  action: ApprovalAction,
  text: string,
): Promise<string> {
  const file = await readConfigFile(path);
  await loadYaml();
  const doc = parseDocument(file);
  const list = doc.getIn(["approvals", action]);
  if (!list || typeof list !== "object" || !("items" in list)) return path;
  const items = (list as { items: unknown[] }).items;
  const keep = items.filter((item) => {
    const value = typeof item === "object" && item !== null && "value" in item
      ? (item as { value: unknown }).value
      : item;
    return value !== text;
  });
  doc.setIn(["approvals", action], doc.createNode(keep));
  await Deno.writeTextFile(path, doc.toString());
  return path;
}

/** The rules a session starts with, and warnings to show. */
export interface LoadedRules {
  rules: ApprovalRule[];
  warnings: string[];
}

/**
 * Reads the `approvals:` lists of a repository's config text: its `deny` and `ask` rules (they
 * only tighten); an `allow` is dropped with a warning, trusted folder or not.
 */
export function repositoryRules(text: string, path: string): LoadedRules {
  const doc = parseDocument(text, { uniqueKeys: false });
  const value = isMap(doc.contents) ? doc.toJS()?.approvals : undefined;
  if (value === undefined || value === null) return { rules: [], warnings: [] };
  const checked = approvalsSchema.safeParse(value);
  if (!checked.success) {
    throw new ConfigError(
      `${path}: 'approvals' is not valid (${checked.error.issues[0]?.message ?? "wrong shape"}).`,
    );
  }
  const warnings = (checked.data.allow ?? []).length === 0 ? [] : [
    `${path}: a repository's config may add 'deny' and 'ask' approval rules, never 'allow': ` +
    `its allow rules (${checked.data.allow!.join(", ")}) are ignored. Put them in your own ` +
    `config, or answer "always in this project" when asked.`,
  ];
  return {
    rules: rulesOf({ ask: checked.data.ask, deny: checked.data.deny }, path, "repository"),
    warnings,
  };
}

/** Reads an `--approval-rules` file: `allow`/`ask`/`deny` lists, at the top or under `approvals`. */
export async function policyFileRules(path: string): Promise<ApprovalRule[]> {
  let text: string;
  try {
    text = await readConfigFile(path);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(
      `Cannot read the approval rules file ${path} (--approval-rules): ${(e as Error).message}.`,
    );
  }
  await loadYaml();
  const doc = parseDocument(text);
  const data = doc.errors.length === 0 ? doc.toJS() : undefined;
  const lists = data && typeof data === "object" && "approvals" in data ? data.approvals : data;
  const checked = approvalsSchema.safeParse(lists ?? {});
  if (doc.errors.length > 0 || !checked.success) {
    throw new ConfigError(
      `${path} (--approval-rules) is not an approval rules file: ${
        doc.errors[0]?.message.split("\n")[0] ?? checked.error?.issues[0]?.message
      }. Write allow:, ask: and deny: lists of rules ('$ git status', 'edit src/**', 'tool NAME').`,
    );
  }
  return rulesOf(checked.data, path, "file");
}

/**
 * Every rule in force for a session in the real folder `folder`: the user config's (or the
 * explicitly named config file's), the project's saved ones, a repository config file's deny/ask
 * rules, and the `--approval-rules` file's.
 */
export async function loadApprovalRules(options: {
  /** The loaded config's path and lists (`loadConfig`). */
  configPath?: string;
  configApprovals?: ApprovalLists;
  /** The user config's lists, when the loaded config is a repository's file. */
  userConfig?: { path: string; approvals?: ApprovalLists };
  /** The loaded config is a repository's own file (`LoadedConfig.local`); else told by its path. */
  configLocal?: boolean;
  folder: string;
  rulesFile?: string;
  explicitConfig?: string;
}): Promise<LoadedRules> {
  const rules: ApprovalRule[] = [];
  const warnings: string[] = [];
  const local = options.configLocal ??
    configCandidates(options.explicitConfig).some((c) => c.local && c.path === options.configPath);
  if (local && options.configPath) {
    // The loaded file is the repository's: its own lists only tighten; the user's come beside it.
    if (options.userConfig) {
      rules.push(...rulesOf(options.userConfig.approvals, options.userConfig.path, "user"));
    }
    const text = await readConfigFile(options.configPath);
    await loadYaml();
    const repo = repositoryRules(text, options.configPath);
    rules.push(...repo.rules);
    warnings.push(...repo.warnings);
  } else if (options.configPath) {
    rules.push(...rulesOf(options.configApprovals, options.configPath, "user"));
  }
  rules.push(...await projectRules(options.folder));
  if (options.rulesFile) rules.push(...await policyFileRules(options.rulesFile));
  return { rules, warnings };
}
