/**
 * Which commands a command line runs, seen through the programs that only run another one:
 * `bash -c`/`sh -c` (and dash, zsh, ksh …), `eval`, `exec`, `command`, `builtin`, `nice`,
 * `nohup`, `timeout`, `time`, `xargs`, `env` (its options and `VAR=value`), `sudo`, `doas`, `su
 * -c`, `stdbuf`, `setsid`, `ionice`, `chrt`, `flock`, `watch`, `trap`, `busybox` and `find
 * -exec`, by
 * name or by any path (`/usr/bin/env`), nested to MAX_DEPTH. The approval rules
 * (agent/approval_rules.ts) judge each command found; what cannot be followed is in `unjudged`.
 */
import { MAX_DEPTH, parseShell, type Word } from "./shell_syntax.ts";

/** A command a line runs. */
export interface RunCommand {
  /** Its words, the command's name first; empty for a line part that only assigns or redirects. */
  words: Word[];
  /** A wrapper (`nice -n 5 rm x`): judged by deny and ask rules, covered by its inner command. */
  wrapper: boolean;
  /**
   * Reached with no change of environment or user and no file written by redirection, through
   * wrappers found where the system keeps them: an allow rule may cover it.
   */
  allowable: boolean;
}

/** The commands a line runs, and why any part of it could not be judged. */
export interface Resolved {
  commands: RunCommand[];
  unjudged: string[];
}

type Step =
  | { run: Word[]; allowable?: false }
  | { runs: Word[][] }
  | { script: Word; what: string }
  | { none: true }
  | { unjudged: string };

const SHELLS = new Set([
  "bash",
  "sh",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "posh",
  "rbash",
]);
/** Where a wrapper named by its path is the system's, not one the model could have written. */
const SYSTEM_PATH = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * Skips the options of `args` from index 1: `short` names the one-letter options that take a
 * value, `long` the long ones. Returns the index of the first operand and the letters seen, or a
 * reason when an option is not known before the command runs.
 */
function options(
  args: Word[],
  short: string,
  long: string[] = [],
  plus = false,
): { at: number; seen: string } | { unjudged: string } {
  let seen = "";
  let i = 1;
  while (i < args.length) {
    const a = args[i];
    if (a === null) return { unjudged: `an option of \`${args[0]}\` known only when it runs` };
    if (a === "--") return { at: i + 1, seen };
    if (a.startsWith("--")) {
      const name = a.slice(2).split("=")[0];
      seen += `{${name}}`;
      i += !a.includes("=") && long.includes(name) ? 2 : 1;
      continue;
    }
    if (!(a.startsWith("-") || (plus && a.startsWith("+"))) || a.length === 1) break;
    i++;
    for (let j = 1; j < a.length; j++) {
      seen += a[j];
      if (short.includes(a[j])) {
        if (j === a.length - 1) i++;
        break;
      }
    }
  }
  return { at: i, seen };
}

/** `args` run as a command after their options, skipping `operands` operands first. */
function after(
  args: Word[],
  short: string,
  long: string[] = [],
  operands = 0,
): Step {
  const o = options(args, short, long);
  if ("unjudged" in o) return o;
  return { run: args.slice(o.at + operands) };
}

function shell(args: Word[]): Step {
  const o = options(args, "oO", ["rcfile", "init-file"], true);
  if ("unjudged" in o) return o;
  if (o.seen.includes("c")) return { script: args[o.at] ?? null, what: `\`${args[0]} -c\`` };
  if (o.seen.includes("s") || o.seen.includes("i") || args[o.at] === undefined) {
    return { unjudged: `\`${args[0]}\` reading its commands from its input` };
  }
  // A script file: judged as the shell running it, like `./script.sh`.
  return { none: true };
}

function env(args: Word[]): Step {
  const o = options(args, "uCS", ["unset", "chdir", "split-string"]);
  if ("unjudged" in o) return o;
  if (o.seen.includes("S") || o.seen.includes("{split-string}")) {
    return { unjudged: "`env -S`, which splits a string into a command" };
  }
  let i = o.at;
  let changes = /[iu]|\{unset\}|\{ignore-environment\}/.test(o.seen) || o.at > 1;
  while (i < args.length && (args[i] === null || ASSIGNMENT.test(args[i] ?? ""))) {
    if (args[i] === null) return { unjudged: "a word of `env` known only when it runs" };
    changes = true;
    i++;
  }
  const run = args.slice(i);
  return changes ? { run, allowable: false } : { run };
}

function xargs(args: Word[]): Step {
  const o = options(args, "adEILnPs", [
    "arg-file",
    "delimiter",
    "eof",
    "max-lines",
    "max-args",
    "max-procs",
    "max-chars",
    "process-slot-var",
  ]);
  if ("unjudged" in o) return o;
  // With a replace string, the words holding it take the input's value.
  const replace = /[Ii]|\{replace\}/.test(o.seen);
  const run = args.slice(o.at);
  const command: Word[] = run.length === 0 ? ["echo"] : run;
  return { run: replace ? command.map((w, i) => (i === 0 ? w : null)) : [...command, null] };
}

function flock(args: Word[]): Step {
  const o = options(args, "wEc", ["timeout", "conflict-exit-code", "command"]);
  if ("unjudged" in o) return o;
  const c = args.findIndex((a, i) => i > 0 && (a === "-c" || a === "--command"));
  if (c > 0) return { script: args[c + 1] ?? null, what: "`flock -c`" };
  return { run: args.slice(o.at + 1) };
}

function find(args: Word[]): Step {
  const runs: Word[][] = [];
  for (let i = 1; i < args.length; i++) {
    if (["-exec", "-execdir", "-ok", "-okdir"].includes(args[i] ?? "")) {
      let j = i + 1;
      while (j < args.length && args[j] !== ";" && args[j] !== "+") j++;
      runs.push(args.slice(i + 1, j).map((w) => (w?.includes("{}") ? null : w)));
      i = j;
    } else if (args[i] === null) {
      return { unjudged: "a word of `find` known only when it runs" };
    }
  }
  return runs.length === 0 ? { none: true } : { runs };
}

/** The wrappers by name: how each finds the command it runs. */
const WRAPPERS: Record<string, (args: Word[]) => Step> = {
  eval: (args) => ({
    script: args.slice(1).some((a) => a === null) ? null : args.slice(1).join(" "),
    what: "`eval`",
  }),
  exec: (args) => after(args, "a"),
  command: (args) => {
    const o = options(args, "");
    if ("unjudged" in o) return o;
    return /[vV]/.test(o.seen) ? { none: true } : { run: args.slice(o.at) };
  },
  builtin: (args) => ({ run: args.slice(1) }),
  nice: (args) => after(args, "n", ["adjustment"]),
  nohup: (args) => after(args, ""),
  timeout: (args) => after(args, "sk", ["signal", "kill-after"], 1),
  time: (args) => after(args, "fo", ["format", "output"]),
  stdbuf: (args) => after(args, "ioe", ["input", "output", "error"]),
  setsid: (args) => after(args, ""),
  ionice: (args) => {
    const o = options(args, "cnpPu", ["class", "classdata", "pid", "pgid", "uid"]);
    if ("unjudged" in o) return o;
    return /[pPu]|\{pid\}|\{pgid\}|\{uid\}/.test(o.seen)
      ? { none: true }
      : { run: args.slice(o.at) };
  },
  chrt: (args) => {
    const o = options(args, "TPD", ["sched-runtime", "sched-period", "sched-deadline"]);
    if ("unjudged" in o) return o;
    if (/[pm]|\{pid\}|\{max\}/.test(o.seen)) return { none: true };
    return { run: args.slice(o.at + 1) };
  },
  flock,
  xargs,
  env,
  sudo: (args) => {
    const o = options(args, "ugCDhprtTU", [
      "user",
      "group",
      "close-from",
      "chdir",
      "host",
      "prompt",
      "role",
      "type",
      "command-timeout",
      "other-user",
    ]);
    if ("unjudged" in o) return o;
    if (/[elvkK]|\{edit\}|\{list\}|\{validate\}/.test(o.seen)) return { none: true };
    let i = o.at;
    while (ASSIGNMENT.test(args[i] ?? "")) i++;
    if (i >= args.length && /[is]/.test(o.seen)) {
      return { unjudged: "`sudo` starting a shell that reads its input" };
    }
    return { run: args.slice(i), allowable: false };
  },
  doas: (args) => {
    const s = after(args, "uC");
    return "run" in s ? { run: s.run, allowable: false } : s;
  },
  su: (args) => {
    const o = options(args, "cgGsw", ["command", "session-command", "group", "shell"]);
    if ("unjudged" in o) return o;
    const c = args.findIndex((a, i) => i > 0 && /^(-c|--command|--session-command)$/.test(a ?? ""));
    const joined = args.find((a) => /^--(session-)?command=/.test(a ?? ""));
    if (c > 0) return { script: args[c + 1] ?? null, what: "`su -c`" };
    if (joined) return { script: joined.replace(/^[^=]*=/, ""), what: "`su --command`" };
    return { unjudged: "`su` starting a shell that reads its input" };
  },
  watch: (args) => {
    const o = options(args, "nq", ["interval", "equexit"]);
    if ("unjudged" in o) return o;
    const rest = args.slice(o.at);
    if (/x|\{exec\}/.test(o.seen)) return { run: rest };
    return { script: rest.some((a) => a === null) ? null : rest.join(" "), what: "`watch`" };
  },
  trap: (args) => {
    const o = options(args, "");
    if ("unjudged" in o) return o;
    const action = args[o.at];
    if (/[lp]/.test(o.seen) || action === undefined || action === "-") return { none: true };
    return { script: action, what: "`trap`" };
  },
  alias: (args) =>
    args.slice(1).some((a) => a === null || a.includes("="))
      ? { unjudged: "an alias, which changes what later commands mean" }
      : { none: true },
  busybox: (args) => ({ run: args.slice(1) }),
  toybox: (args) => ({ run: args.slice(1) }),
  find,
};

function basename(word: string): string {
  return word.slice(word.lastIndexOf("/") + 1);
}

/** The commands `script` runs, seen through wrappers; `depth` is its nesting so far. */
export function commandsRun(script: string, depth = 0): Resolved {
  const parsed = parseShell(script, depth);
  const out: Resolved = { commands: [], unjudged: [...parsed.unjudged] };
  const fail = (reason: string) => {
    if (!out.unjudged.includes(reason)) out.unjudged.push(reason);
  };
  const peel = (start: Word[], allowable: boolean, level: number): void => {
    let words = start;
    for (;;) {
      if (words.length === 0) return;
      const name = words[0];
      if (name === null) {
        fail("a command whose name is known only when it runs");
        out.commands.push({ words, wrapper: false, allowable: false });
        return;
      }
      const base = basename(name);
      const handler = Object.hasOwn(WRAPPERS, base)
        ? WRAPPERS[base]
        : SHELLS.has(base)
        ? shell
        : undefined;
      if (!handler) {
        out.commands.push({ words, wrapper: false, allowable });
        return;
      }
      const entry: RunCommand = { words, wrapper: true, allowable: false };
      out.commands.push(entry);
      if (level + 1 > MAX_DEPTH) {
        fail(`commands nested deeper than ${MAX_DEPTH} levels`);
        return;
      }
      level++;
      // A wrapper the model could have written (`./nice`) leads nowhere an allow may follow.
      if (name.includes("/") && !SYSTEM_PATH.test(name)) allowable = false;
      const step = handler(words);
      if ("unjudged" in step) {
        fail(step.unjudged);
        return;
      }
      if ("none" in step) {
        // It runs nothing else (`bash script.sh`, `command -v rm`): judged as itself.
        entry.wrapper = false;
        entry.allowable = allowable;
        return;
      }
      if ("script" in step) {
        if (step.script === null) {
          fail(`the script of ${step.what} known only when it runs`);
          return;
        }
        const inner = commandsRun(step.script, level);
        for (const r of inner.unjudged) fail(r);
        for (const c of inner.commands) {
          out.commands.push({ ...c, allowable: c.allowable && allowable });
        }
        return;
      }
      if ("runs" in step) {
        for (const run of step.runs) peel(run, allowable, level);
        return;
      }
      if (step.allowable === false) allowable = false;
      words = step.run;
    }
  };
  for (const command of parsed.commands) {
    const plain = command.assignments.length === 0 && !command.writes;
    if (command.words.length === 0) {
      // Only assignments or a redirection: nothing runs, but it changes what later parts do.
      out.commands.push({ words: [], wrapper: false, allowable: false });
      continue;
    }
    peel(command.words, plain, depth);
  }
  return out;
}
