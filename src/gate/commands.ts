/**
 * What the gate reads in a command line: whether it only reads (then, where a sandbox can confine
 * it, it runs unasked) and the prefix an "always" answer remembers.
 */
import { isAbsolute, normalize } from "node:path";
import { defaultSandbox } from "../policy/sandbox.ts";

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

/** True where a reader can be run in a read-only sandbox (bubblewrap works here). */
export function canRunUnasked(): boolean {
  return defaultSandbox().mode !== "none";
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
 * where a prefix can tell it, and "always" is not offered. `cd DIR && COMMAND` with DIR in
 * `workspace` (see `afterCd`) has COMMAND's prefix.
 */
export function commandPrefix(command: string, workspace?: string): string | undefined {
  command = afterCd(command, workspace) ?? command;
  if (SHELL_SYNTAX.test(command) || command.includes("|")) return undefined;
  const words = command.trim().split(/\s+/).filter((w) => w !== "");
  if (words.length === 0 || /[=]/.test(words[0])) return undefined;
  if (SUBCOMMAND_TOOLS.has(words[0]) && words[1] !== undefined) {
    return words[1].startsWith("-") ? undefined : `${words[0]} ${words[1]}`;
  }
  return words[0];
}

/**
 * COMMAND of `cd DIR && COMMAND`, when DIR is plainly within `workspace` (a path of plain
 * characters, no `..`; absolute only under the workspace) and COMMAND is a plain command (no
 * further `&&`, `;`, pipe or other shell syntax); else undefined.
 */
export function afterCd(command: string, workspace?: string): string | undefined {
  const found = /^\s*cd\s+([\w./@+,:-]+)\s*&&(.*)$/s.exec(command);
  if (!found || found[2].trim() === "") return undefined;
  const [, dir, rest] = found;
  if (dir.startsWith("-") || dir.split("/").includes("..")) return undefined;
  if (isAbsolute(dir)) {
    if (workspace === undefined) return undefined;
    const root = normalize(workspace).replace(/\/+$/, "");
    const target = normalize(dir).replace(/\/+$/, "");
    if (target !== root && !target.startsWith(`${root}/`)) return undefined;
  }
  if (SHELL_SYNTAX.test(rest) || rest.includes("|")) return undefined;
  return rest.trim();
}

/**
 * Whether "always" for `prefix` covers `command`: the command's own prefix is that one, so
 * "always" for `git push` never covers `git reset --hard`, and "always" for a bare `git` covers
 * no subcommand.
 */
export function matchesPrefix(command: string, prefix: string, workspace?: string): boolean {
  return commandPrefix(command, workspace) === prefix;
}
