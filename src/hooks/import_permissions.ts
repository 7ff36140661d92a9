/**
 * `deft hooks import`, its second half: a Claude Code settings file's `permissions.allow`, `ask`
 * and `deny` as Deft's `approvals:` rules (config/approval_rules.ts). Only what keeps its meaning
 * is converted; every other entry is named with the reason, never dropped unsaid:
 *
 * - `Bash(PREFIX:*)` and `Bash(PREFIX *)` → `$ PREFIX` (both are whole-word prefixes); `Bash`,
 *   `Bash(*)` → `tool bash`. An exact `Bash(CMD)` becomes `$ CMD` in `deny` and `ask` (stricter:
 *   Deft's rule also covers longer commands, and a note says so) but is not imported in `allow`,
 *   where it would let longer commands through. A `*` elsewhere, a prefix ending inside a word
 *   (`ls*`) or shell syntax has no Deft form.
 * - `Edit`, `Write`, `MultiEdit` (bare: every edit, `edit **`) with a gitignore-style path: `//abs`
 *   → `/abs`, `~/x` → the home folder's, `/x` (the project root's) and `./x` → `x` in the
 *   workspace. A match of a folder covers what is inside it, as in gitignore, so a name gets a
 *   companion rule for what is under it (in any folder, for a name without `/`, which matches at
 *   any depth). Brackets, braces, `!` and `..` have no Deft form.
 * - `mcp__SERVER__TOOL` → `tool mcp__SERVER__TOOL`; a whole server (`mcp__SERVER`,
 *   `mcp__SERVER__*`) has none (a Deft tool rule names one tool).
 * - `Read`, `Glob`, `Grep`, `LS` (reading), `WebFetch`, `WebSearch` and other tools: none.
 */
import { parseRule } from "../config/approval_rules.ts";
import type { ApprovalLists } from "../config/approval_rules.ts";

type Action = "allow" | "ask" | "deny";
const ACTIONS: readonly Action[] = ["allow", "ask", "deny"];

/** The converted rules, and what could not be converted (one line each). */
export interface ImportedPermissions {
  approvals: ApprovalLists;
  unmapped: string[];
  notes: string[];
}

/** One entry's result: Deft rule texts (and a note), or why it has none. */
type Mapped = { rules: string[]; note?: string } | { reason: string };

const READERS = new Set(["Read", "Glob", "Grep", "LS", "NotebookRead"]);
const EDITORS = new Set(["Edit", "Write", "MultiEdit"]);
const WEB = new Set(["WebFetch", "WebSearch"]);

/** Converts `settings.permissions`; `home` expands `~/` in path rules (none: not converted). */
export function importClaudePermissions(settings: unknown, home?: string): ImportedPermissions {
  const out: ImportedPermissions = { approvals: {}, unmapped: [], notes: [] };
  const permissions = isObject(settings) ? settings.permissions : undefined;
  if (permissions === undefined) return out;
  if (!isObject(permissions)) {
    out.unmapped.push("permissions: not an object; nothing of it is imported");
    return out;
  }
  for (const [key, value] of Object.entries(permissions)) {
    if (!ACTIONS.includes(key as Action)) {
      out.unmapped.push(`permissions.${key}: Deft has no such setting (only allow, ask, deny)`);
      continue;
    }
    const action = key as Action;
    if (!Array.isArray(value)) {
      out.unmapped.push(`permissions.${action}: not a list of rules; dropped`);
      continue;
    }
    const rules: string[] = [];
    for (const entry of value) {
      const where = `permissions.${action} ${JSON.stringify(entry)}`;
      const mapped = typeof entry === "string"
        ? mapPermission(entry, action, home)
        : { reason: "not a rule text" };
      if ("reason" in mapped) {
        out.unmapped.push(`${where}: ${mapped.reason}`);
        continue;
      }
      if (mapped.note) out.notes.push(`${where}: ${mapped.note}`);
      for (const rule of mapped.rules) if (!rules.includes(rule)) rules.push(rule);
    }
    if (rules.length > 0) out.approvals[action] = rules;
  }
  return out;
}

/** One Claude Code rule (`Tool` or `Tool(content)`) as Deft rule texts, or why it has none. */
export function mapPermission(entry: string, action: Action, home?: string): Mapped {
  const m = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s.exec(entry.trim());
  if (!m) return { reason: "not a Claude Code rule (`Tool` or `Tool(pattern)`)" };
  const [, tool, content] = m;
  if (tool === "Bash") {
    return content === undefined || content.trim() === "*" || content.trim() === ""
      ? { rules: ["tool bash"] }
      : bashRule(content.trim(), action);
  }
  if (EDITORS.has(tool)) {
    return content === undefined || content.trim() === "" ? { rules: ["edit **"] } : editRules(
      content.trim(),
      home,
    );
  }
  if (tool.startsWith("mcp__")) return mcpRule(tool, content);
  if (READERS.has(tool)) {
    return {
      reason: "Deft's approval rules cannot name reading a path (they cover commands, edits " +
        "and whole tools); the sandbox decides what can be read",
    };
  }
  if (WEB.has(tool)) {
    return {
      reason: `Deft has no ${tool} tool; the model's shell reaches the network only where ` +
        "`allow_network` lets it, for every address alike",
    };
  }
  return { reason: `Deft has no tool ${tool}` };
}

/** A Bash rule's content: a prefix (`X:*`, `X *`), `*` anywhere else, or an exact command. */
function bashRule(content: string, action: Action): Mapped {
  const legacy = /^(.*):\*$/s.exec(content);
  const spaced = /^(.*\S)\s+\*$/s.exec(content);
  const prefix = legacy?.[1] ?? spaced?.[1];
  if (prefix !== undefined && !prefix.includes("*")) return commandRule(prefix);
  if (content.includes("*")) {
    return {
      reason: content.endsWith("*") && !/\s\*$/.test(content)
        ? "a prefix ending inside a word (it also matches longer names); Deft's command " +
          "rules compare whole words"
        : "a `*` inside the command; Deft's command rules are word prefixes, without wildcards",
    };
  }
  if (action === "allow") {
    return {
      reason: "Claude Code allows exactly this command; Deft's command rules are prefixes, so " +
        `\`$ ${content}\` would also allow every longer command: add it yourself if you mean that`,
    };
  }
  const mapped = commandRule(content);
  return "reason" in mapped ? mapped : {
    ...mapped,
    note: `Claude Code's rule is this exact command; Deft's \`$ ${content}\` is a prefix, so ` +
      `it also ${action === "deny" ? "refuses" : "asks about"} longer commands`,
  };
}

function commandRule(prefix: string): Mapped {
  const text = `$ ${prefix.trim()}`;
  if (prefix.trim() === "") return { reason: "an empty command prefix" };
  return typeof parseRule(text) === "string"
    ? { reason: "Deft's command rules are plain words, without shell syntax or quotes" }
    : { rules: [text] };
}

/** An Edit/Write/MultiEdit path pattern (gitignore style) as Deft's edit globs. */
function editRules(pattern: string, home?: string): Mapped {
  if (/[[\]{}\\]/.test(pattern) || pattern.startsWith("!")) {
    return { reason: "Deft's edit globs have only `*`, `**` and `?` (no brackets, braces, `!`)" };
  }
  let glob: string;
  let anywhere = false;
  if (pattern.startsWith("//")) glob = pattern.slice(1);
  else if (pattern.startsWith("~/")) {
    if (!home) return { reason: "`~` with no home folder known; write the path from `//`" };
    glob = `${home.replace(/\/+$/, "")}/${pattern.slice(2)}`;
  } else {
    // `/x` is from the project root, `./x` and `x` from the current folder: the workspace's.
    glob = pattern.replace(/^\.?\//, "");
    // gitignore: a bare name (no `/` but a trailing one) matches at any depth.
    anywhere = glob === pattern && !glob.replace(/\/+$/, "").includes("/");
  }
  if (glob.split("/").includes("..")) {
    return { reason: "a path with `..`; write it from the root (`//`) instead" };
  }
  const folder = glob.endsWith("/");
  glob = glob.replace(/\/+$/, "");
  if (glob === "" || glob === "**" || glob === "*") return { rules: ["edit **"] };
  const last = glob.slice(glob.lastIndexOf("/") + 1);
  // A match of a folder covers what is inside it.
  if (last === "*" || last === "**") {
    return { rules: [`edit ${glob.slice(0, glob.length - last.length)}**`] };
  }
  const inside = anywhere ? `edit **/${glob}/**` : `edit ${glob}/**`;
  if (folder) return { rules: [inside] };
  return /[*?]/.test(last) ? { rules: [`edit ${glob}`] } : { rules: [`edit ${glob}`, inside] };
}

/** `mcp__SERVER__TOOL` as a tool rule; a whole server has no Deft form. */
function mcpRule(tool: string, content: string | undefined): Mapped {
  if (content !== undefined) return { reason: "an MCP tool rule takes no pattern" };
  const m = /^mcp__(.+?)__(.+)$/.exec(tool);
  if (!m || m[2] === "*") {
    return {
      reason: "names every tool of an MCP server; a Deft `tool` rule names one tool: add " +
        "`tool mcp__SERVER__NAME` for each",
    };
  }
  return { rules: [`tool ${tool}`] };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
