/**
 * Approvals: before a tool call runs, the user may have to say yes. `never` runs everything;
 * `commands` asks before each bash command except a short list of read-only ones; `all` also asks
 * before every edit (showing the diff with context) and every call of a tool Deft does not know
 * (MCP). A "no" goes back to the model as the tool's error, with the user's reason; "always" stops
 * asking for that command prefix (or that file) for the rest of the session, "session" stops
 * asking at all. While a question is open it owns the screen (the asker's `hold`).
 */
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { diffFilesSync } from "../policy/git.ts";
import { defaultSandbox } from "../policy/sandbox.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";
import type { Tool } from "../tools/base.ts";
import { approvalClassOf } from "../tools/catalog.ts";
import {
  type CallGate,
  type GateVerdict,
  normalizeToolName,
  RUN_UNASKED,
} from "../tools/executor.ts";

/** The approval modes, most permissive first. */
export const APPROVAL_MODES = ["never", "commands", "all"] as const;

/** When Deft asks before a tool call. */
export type ApprovalMode = typeof APPROVAL_MODES[number];

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
const EDIT_TOOL = normalizeToolName("str_replace_based_edit_tool");
const JSON_TOOL = normalizeToolName("json_edit_tool");
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

/** The prefix "always" remembers for a plain command; undefined for shell syntax. */
export function commandPrefix(command: string): string | undefined {
  if (SHELL_SYNTAX.test(command) || command.includes("|")) return undefined;
  const words = command.trim().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0 || /[=]/.test(words[0])) return undefined;
  if (SUBCOMMAND_TOOLS.has(words[0]) && words[1] && !words[1].startsWith("-")) {
    return `${words[0]} ${words[1]}`;
  }
  return words[0];
}

function matchesPrefix(command: string, prefix: string): boolean {
  if (commandPrefix(command) === undefined) return false;
  const words = command.trim().split(/\s+/);
  const want = prefix.split(" ");
  return want.every((w, i) => words[i] === w);
}

/** Decides, and asks the user when needed, whether each call may run. */
export class ApprovalGate implements CallGate {
  readonly #always = new Set<string>();
  #queue: Promise<unknown> = Promise.resolve();

  /**
   * `workspace` resolves the relative paths of edits (to tell whether they land in `.git`).
   * `inContainer`: the tools run in a container, so paths are the container's (never looked up
   * on the host) and every command is asked (see #request).
   */
  constructor(
    public mode: ApprovalMode,
    private readonly ask: AskUser,
    private readonly show: (text: string) => void,
    private readonly workspace?: string,
    private readonly inContainer = false,
  ) {}

  /**
   * Null when the call may run; `RUN_UNASKED` when it may run without asking, where it cannot
   * act; else the refusal the model reads. One question at a time.
   */
  check(tool: Tool, args: Record<string, unknown>): Promise<GateVerdict> {
    const request = this.#request(tool, args);
    if (request === RUN_UNASKED) return Promise.resolve(RUN_UNASKED);
    if (!request) return Promise.resolve(null);
    return this.#ask(request);
  }

  async #ask(request: Request): Promise<string | null> {
    const answer = this.#queue.then(() => this.#decide(request));
    this.#queue = answer.catch(() => {});
    return await answer;
  }

  #request(
    tool: Tool,
    args: Record<string, unknown>,
  ): Request | typeof RUN_UNASKED | undefined {
    if (this.mode === "never") return undefined;
    const name = normalizeToolName(tool.name);
    const kind = approvalClassOf(tool.name);
    if (kind === "runs-commands") {
      if (args.restart === true || typeof args.command !== "string") return undefined;
      const command = args.command;
      // A reader runs unasked only where it cannot act, whatever git or a planted shell
      // function would make of it; without a sandbox to run it in, it is asked like the rest.
      // In a container there is no read-only sandbox to run it in (the container is the
      // boundary, and the workspace is writable there): every command is asked.
      if (isReadOnlyCommand(command) && !this.inContainer && canRunUnasked()) return RUN_UNASKED;
      if ([...this.#always].some((p) => p.startsWith("$ ") && matchesPrefix(command, p.slice(2)))) {
        return undefined;
      }
      const prefix = commandPrefix(command);
      return {
        kind: "command",
        show: `$ ${command}`,
        always: prefix === undefined ? undefined : `$ ${prefix}`,
        alwaysLabel: prefix === undefined ? undefined : `\`${prefix}\` commands`,
      };
    }
    const isEdit = kind === "edits-files";
    // git's own files can make "read-only" git commands run programs: edits there are asked about.
    const gitEdit = isEdit && this.mode === "commands" && this.#touchesGit(args);
    if ((this.mode !== "all" && !gitEdit) || kind === "read-only") return undefined;
    if (isEdit) {
      const edit = describeEdit(name, args, this.workspace);
      if (edit === null) return undefined;
      const key = `edit ${edit.path}`;
      if (this.#always.has(key)) return undefined;
      return { kind: "edit", show: edit.diff, always: key, alwaysLabel: `edits to ${edit.path}` };
    }
    const key = `tool ${name}`;
    if (this.#always.has(key)) return undefined;
    return {
      kind: "tool call",
      show: `${tool.name} ${clip(JSON.stringify(args))}`,
      always: key,
      alwaysLabel: `${tool.name} calls`,
    };
  }

  /**
   * Whether an edit lands in git's own files (`.git/…`, `.gitattributes`, `.gitmodules`), by the
   * path as written and by where it resolves: a symlink `g -> .git` makes `g/config` git's.
   */
  #touchesGit(args: Record<string, unknown>): boolean {
    const path = String(args.path ?? args.file_path ?? "");
    const full = isAbsolute(path) ? path : resolve(this.workspace ?? Deno.cwd(), path);
    // A container path means nothing on the host: judged as written (no command runs unasked
    // there, so a symlink to .git cannot make a reader run git's programs).
    return [path, this.inContainer ? full : resolvedPath(full)].some((p) =>
      p.split("/").some((part) => part === ".git" || /^\.git(attributes|modules)$/.test(part))
    );
  }

  async #decide(request: Request): Promise<string | null> {
    // An earlier answer ("always", "session") may cover this one by now.
    if (this.mode === "never") return null;
    if (request.always && this.#always.has(request.always)) return null;
    const release = this.ask.hold?.() ?? (() => {});
    try {
      return await this.#question(request);
    } finally {
      release();
    }
  }

  async #question(request: Request): Promise<string | null> {
    const choices = [
      "[y]es",
      `[n]o, with a reason for the model ("n use the test script")`,
      ...(request.always ? [`[a]lways for ${visible(request.alwaysLabel ?? "")}`] : []),
      "[s]ession: ask nothing more in this session",
    ].join(" · ");
    const tell = (text: string) => this.ask.tell?.(text);
    // The file's lines around an edit can hold a key: masked as the trajectory masks it.
    this.show(`\nApprove this ${request.kind}?\n${maskOutput(visible(request.show))}\n${choices}`);
    for (;;) {
      const line = await this.ask("approve> ");
      if (line === null) {
        tell("→ no answer: not run");
        return refusal(request, "no answer (the prompt was closed or interrupted)");
      }
      const answer = line.trim();
      const word = /^([a-z]+)\b[\s:,.-]*(.*)$/is.exec(answer);
      const head = word?.[1].toLowerCase() ?? "";
      if (head === "y" || head === "yes") {
        tell("→ yes");
        return null;
      }
      if ((head === "a" || head === "always") && request.always) {
        this.#always.add(request.always);
        tell(`→ yes, and to ${visible(request.alwaysLabel ?? "")} for the rest of the session`);
        return null;
      }
      if (head === "s" || head === "session") {
        this.mode = "never";
        tell("→ yes, and to every call for the rest of the session (approval: never)");
        return null;
      }
      if (head === "n" || head === "no") {
        const reason = word?.[2].trim() ?? "";
        tell(`→ no${reason ? `; the model is told: ${visible(reason)}` : ""}`);
        return refusal(request, reason);
      }
      this.show(
        `Please answer y, n (with an optional reason)${request.always ? ", a" : ""} or s.`,
      );
    }
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
 * What an editing call will change, for the question; null when it only reads (a view). A tool
 * the catalog classes as editing files that is not one of the two editors is shown as its call.
 */
function describeEdit(
  name: string,
  args: Record<string, unknown>,
  workspace: string | undefined,
): { path: string; diff: string } | null {
  const text = (v: unknown) => typeof v === "string" ? v : "";
  if (name !== EDIT_TOOL && name !== JSON_TOOL) {
    const path = text(args.path) || text(args.file_path);
    return { path, diff: `${name} ${clip(JSON.stringify(args))}` };
  }
  if (name === JSON_TOOL) {
    if (args.operation === "view") return null;
    const path = text(args.file_path);
    const value = args.value === undefined ? "" : ` = ${clip(JSON.stringify(args.value))}`;
    return { path, diff: `${path}: ${args.operation} ${text(args.json_path)}${value}` };
  }
  const path = text(args.path);
  const preview = editPreview(args, workspace);
  if (preview) return { path, diff: preview };
  const lines = (prefix: string, body: string) =>
    limitLines(body.split("\n")).map((l) => `${prefix}${l}`);
  switch (args.command) {
    case "create":
      return {
        path,
        diff: [`+++ ${path} (new file)`, ...lines("+", text(args.file_text))].join("\n"),
      };
    case "str_replace":
      return {
        path,
        diff: [
          `--- ${path}`,
          `+++ ${path}`,
          ...lines("-", text(args.old_str)),
          ...lines("+", text(args.new_str)),
        ].join("\n"),
      };
    case "insert":
      return {
        path,
        diff: [`+++ ${path} (after line ${args.insert_line})`, ...lines("+", text(args.new_str))]
          .join("\n"),
      };
    case "undo_edit":
      return { path, diff: `undo the last edit of ${path}` };
    default:
      return null;
  }
}

/**
 * The edit as it would change the file: a unified diff with three lines of context around each
 * change, headed by the path. Undefined when the file cannot be read or the edit would not apply
 * as given (the editor refuses it then; the request is shown as written).
 */
function editPreview(
  args: Record<string, unknown>,
  workspace: string | undefined,
): string | undefined {
  const path = typeof args.path === "string" ? args.path : "";
  if (path === "") return undefined;
  const full = isAbsolute(path) ? path : resolve(workspace ?? Deno.cwd(), path);
  let before = "";
  let exists = true;
  try {
    const info = Deno.statSync(full);
    if (!info.isFile || info.size > PREVIEW_BYTES) return undefined;
    before = new TextDecoder("utf-8", { fatal: true }).decode(Deno.readFileSync(full));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) return undefined;
    exists = false;
  }
  const after = editedText(args, before, exists);
  if (after === undefined) return undefined;
  const dir = Deno.makeTempDirSync({ prefix: "deft-approve-" });
  try {
    Deno.writeTextFileSync(join(dir, "before"), before);
    Deno.writeTextFileSync(join(dir, "after"), after);
    const diff = diffFilesSync(join(dir, "before"), join(dir, "after"), 3);
    const lines = diff.split("\n");
    const hunk = lines.findIndex((l) => l.startsWith("@@"));
    if (hunk < 0) return `${path}: no change`;
    const head = exists ? [`--- ${path}`, `+++ ${path}`] : [`+++ ${path} (new file)`];
    return [...head, ...limitLines(lines.slice(hunk))].join("\n").trimEnd();
  } catch {
    return undefined;
  } finally {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* a leftover temp folder is harmless */ }
  }
}

/** The file's text after the editor's `create`, `str_replace` or `insert`, if it would apply. */
function editedText(
  args: Record<string, unknown>,
  before: string,
  exists: boolean,
): string | undefined {
  const text = (v: unknown) => typeof v === "string" ? v : undefined;
  switch (args.command) {
    case "create":
      return text(args.file_text);
    case "str_replace": {
      const old = text(args.old_str);
      if (!exists || !old || before.split(old).length !== 2) return undefined;
      return before.replace(old, () => text(args.new_str) ?? "");
    }
    case "insert": {
      const at = args.insert_line;
      const added = text(args.new_str);
      if (!exists || added === undefined || typeof at !== "number") return undefined;
      const lines = before.split("\n");
      if (!Number.isInteger(at) || at < 0 || at > lines.length) return undefined;
      return [...lines.slice(0, at), ...added.split("\n"), ...lines.slice(at)].join("\n");
    }
    default:
      return undefined;
  }
}

function limitLines(lines: string[]): string[] {
  if (lines.length <= SHOWN_LINES) return lines;
  return [...lines.slice(0, SHOWN_LINES), `… ${lines.length - SHOWN_LINES} more line(s)`];
}

function clip(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 1999)}…` : text;
}
