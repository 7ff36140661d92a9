/**
 * The load-time check of a hook that runs outside the sandbox (`sandbox: none`): it runs as the
 * user, so it must not run or read what the model can write. Its command line is split into words
 * as bash would split it (quotes, escapes, operators, the variables whose value Deft knows: `HOME`,
 * `DEFT_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`, `PWD`, and a leading `~`), and it is refused when
 *
 * - a command's program (the first word of each simple command, after `VAR=value` words) is a
 *   path inside the workspace, or a bare name that PATH finds there, or cannot be known (a
 *   `$(…)`, a variable Deft does not know): the program would be the model's;
 * - any other word is a path (it holds `/`, or is `.` or `..`) inside the workspace: the script
 *   an interpreter runs (`bash ./x.sh`), the files a formatter reads (`prettier --write .`).
 *
 * Paths are followed through symlinks as far as they exist. The check cannot see what a program
 * does once started (docs/hooks.md says what an outside hook trusts); it refuses the plain
 * mistakes: a project's script, tool or folder handed to a program that runs as the user.
 */
import { readEnv } from "../env.ts";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** A word of the command, or `unknown` where its value depends on what runs. */
interface Word {
  text: string;
  unknown: boolean;
  /** The first word of a simple command. */
  program: boolean;
}

/**
 * Why the outside hook `command`, started in `cwd` (its project folder), may not run with
 * `workspace` the folder the model writes, or undefined when nothing in it is the workspace's.
 */
export function outsideHookProblem(
  command: string,
  workspace: string,
  cwd = workspace,
): string | undefined {
  const ws = realish(workspace);
  const vars = knownVariables(cwd);
  const inside = (p: string) => {
    const real = realish(isAbsolute(p) ? p : join(cwd, p));
    return real === ws || real.startsWith(ws === "/" ? "/" : ws + "/");
  };
  for (const word of shellWords(command, vars)) {
    if (word.program) {
      if (word.unknown) {
        return `its program \`${word.text}\` is only known when it runs; name it by its path`;
      }
      if (word.text.includes("/")) {
        if (inside(word.text)) return `its program ${word.text} lies inside the workspace`;
      } else {
        const found = onPath(word.text, cwd);
        if (found && inside(found)) return `its program ${word.text} is ${found}, in the workspace`;
      }
      continue;
    }
    if (word.unknown) continue;
    for (const part of [word.text, word.text.slice(word.text.indexOf("=") + 1)]) {
      if (isPathLike(part) && inside(part)) return `it names ${part}, in the workspace`;
    }
  }
  return undefined;
}

/**
 * The regular files outside `workspace` that `command` names by path (its scripts): a sandboxed
 * hook is shown them read-only, so a script kept where the sandbox shows nothing (a private temp
 * folder) still runs.
 */
export function namedFiles(command: string, workspace: string): string[] {
  const ws = realish(workspace);
  const vars = knownVariables(workspace);
  const files = new Set<string>();
  for (const word of shellWords(command, vars)) {
    if (word.unknown || !word.text.includes("/")) continue;
    const path = resolve(workspace, word.text);
    const real = realish(path);
    if (real === ws || real.startsWith(ws === "/" ? "/" : ws + "/")) continue;
    try {
      if (Deno.statSync(path).isFile) files.add(path);
    } catch { /* not there */ }
  }
  return [...files];
}

function knownVariables(workspace: string): Record<string, string> {
  const vars: Record<string, string> = {
    DEFT_PROJECT_DIR: workspace,
    CLAUDE_PROJECT_DIR: workspace,
    PWD: workspace,
  };
  const home = readEnv("HOME");
  if (home) vars.HOME = home;
  return vars;
}

function isPathLike(text: string): boolean {
  return text.includes("/") || text === "." || text === "..";
}

/** Where PATH (as a hook gets it) finds `name`, relative entries taken from `cwd`. */
function onPath(name: string, cwd: string): string | undefined {
  for (const dir of (readEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter)) {
    const candidate = resolve(cwd, dir || ".", name);
    try {
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch { /* not here */ }
  }
  return undefined;
}

/** `path` with the symlinks of its longest existing part followed. */
function realish(path: string): string {
  const abs = resolve(path);
  try {
    return Deno.realPathSync(abs);
  } catch {
    const parent = resolve(abs, "..");
    if (parent === abs) return abs;
    return join(realish(parent), abs.slice(parent === "/" ? 1 : parent.length + 1));
  }
}

const OPERATORS = new Set([";", "&", "|", "(", ")", "\n", "<", ">"]);
// After these a new simple command starts (a redirection's target is an ordinary word).
const COMMAND_STARTS = new Set([";", "&", "|", "(", ")", "\n"]);
// Words that lead a command without being its program.
const LEADERS = new Set([
  "!",
  "{",
  "}",
  "then",
  "do",
  "else",
  "elif",
  "if",
  "while",
  "until",
  "time",
  "exec",
  "command",
  "builtin",
  "nohup",
  "env",
]);

/** The words of `command` as bash splits them, with `vars` expanded and programs marked. */
export function shellWords(command: string, vars: Record<string, string>): Word[] {
  const words: Word[] = [];
  let text = "";
  let unknown = false;
  let started = false;
  let expectProgram = true;
  const end = () => {
    if (!started) return;
    const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/.test(text);
    const program = expectProgram && !assignment && !LEADERS.has(text);
    words.push({ text, unknown, program });
    if (program) expectProgram = false;
    text = "";
    unknown = false;
    started = false;
  };
  const variable = (at: number, quoted: boolean): number => {
    // `at` is just past the `$`.
    const rest = command.slice(at);
    const braced = /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(rest);
    const plain = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    const match = braced ?? plain;
    if (match) {
      const value = vars[match[1]];
      if (value === undefined) unknown = true;
      else text += value;
      return at + match[0].length;
    }
    // `$(`, `${…}` with operators, `$1`, `$$`: only known when it runs.
    if (rest !== "" && !(quoted && rest[0] === '"')) unknown = true;
    else text += "$";
    return at;
  };
  let i = 0;
  while (i < command.length) {
    const c = command[i];
    if (c === "\\") {
      started = true;
      if (command[i + 1] !== "\n") text += command[i + 1] ?? "";
      i += 2;
    } else if (c === "'") {
      started = true;
      const close = command.indexOf("'", i + 1);
      text += command.slice(i + 1, close < 0 ? undefined : close);
      i = close < 0 ? command.length : close + 1;
    } else if (c === '"') {
      started = true;
      i++;
      while (i < command.length && command[i] !== '"') {
        if (command[i] === "\\" && '"\\$`'.includes(command[i + 1] ?? "")) {
          text += command[i + 1];
          i += 2;
        } else if (command[i] === "$") {
          i = variable(i + 1, true);
        } else {
          if (command[i] === "`") unknown = true;
          text += command[i++];
        }
      }
      i++;
    } else if (c === "$") {
      started = true;
      i = variable(i + 1, false);
    } else if (c === "`") {
      started = true;
      unknown = true;
      i++;
    } else if (c === "~" && !started && vars.HOME) {
      started = true;
      text += vars.HOME;
      i++;
    } else if (c === "#" && !started) {
      while (i < command.length && command[i] !== "\n") i++;
    } else if (c === " " || c === "\t") {
      end();
      i++;
    } else if (OPERATORS.has(c)) {
      end();
      if (COMMAND_STARTS.has(c)) expectProgram = true;
      i++;
    } else {
      started = true;
      text += c;
      i++;
    }
  }
  end();
  return words;
}
