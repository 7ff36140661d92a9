/**
 * The shell side of a session: the script that prepares a fresh bash, and the bytes that run one
 * command. Commands run in the session shell itself (not a subshell), so `cd`, variables,
 * functions, aliases and options persist. Each command is sent as raw bytes after a short line,
 * `__deft_read <bytes> <call>;__deft_run`, where the alias `__deft_run` stands for
 *
 *   { . "$__deft_src";}</dev/null;{ __deft_done;} 2>/dev/null
 *
 * - Bash reads its script input one byte per system call, so the line is kept short (hence the
 *   alias, which `__deft_done` defines again after every command, so a command cannot lose it)
 *   and the command is not part of it: `__deft_read` takes exactly <bytes> bytes off the control
 *   pipe with one `read -N`, in the C locale (`read -N` counts characters); a command in plain
 *   ASCII text goes to `__deft_readt`, which reads it in the shell's own locale.
 * - The run file (`__deft_src`) holds `eval "$__deft_cmd"`. Sourcing it runs the command at top
 *   level, with stdin from /dev/null, so a command can never read the control pipe and a syntax
 *   error only fails the `eval`. Being a sourced file is what lets an interrupt abandon the
 *   command: the INT trap `return`s from it, like Ctrl-C at a prompt.
 * - `__deft_done` prints the end marker, carrying the exit status and working directory, to
 *   both pipes through descriptors saved at start, so a command that redirects its own stdout
 *   cannot swallow it; each marker in one write, so the reader wakes once for it.
 */

/** Environment variable that tags every process of a session (value: the session id). */
export const SESSION_TAG = "DEFT_BASH_SESSION";
/** Environment variable that tags the processes of one call (value: the call number). */
export const CALL_TAG = "DEFT_BASH_CALL";
/** Environment variable that tags every process a background shell exec'd (value: its id). */
export const JOB_TAG = "DEFT_BASH_JOB";
/** What the run file contains. */
export const RUN_FILE_TEXT = 'eval "$__deft_cmd"\n';

// What runs one command, once `__deft_read` has read it.
const RUN_ALIAS = '{ . "$__deft_src";}</dev/null;{ __deft_done;} 2>/dev/null';
// The functions that read a command: any bytes, or plain text only (see `isPlainText`).
const READ_BYTES = "__deft_read";
const READ_TEXT = "__deft_readt";
const MARK_OUT = 61;
const MARK_ERR = 62;

/** A random hex string of `bytes` bytes from the system CSPRNG. */
export function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(buf, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh, unguessable marker tag (128 bits of randomness). */
export function newMarkerTag(): string {
  return `__DEFT_END_${randomHex(16)}`;
}

// SIGINT while the command runs: at the run file's top level, `return` abandons the rest of the
// command and keeps the shell (errexit is paused so the interrupted status does not end the
// shell; `__deft_done` restores it). Deeper (inside a function or a nested `source`) bash can only
// return one level and the caller would go on running, so the shell exits instead and the tool
// starts a fresh one. Anywhere else (the session's own functions) it is ignored.
const INT_TRAP = "__deft_where; case $? in " +
  "0) __deft_errexit=$-; builtin set +e; builtin return 130;; " +
  "1) builtin exit 130;; esac";

/**
 * The script a fresh shell runs first. It ends by printing a marker, which tells the session the
 * shell is ready. Shell options `-x`/`-v` are switched off around the session's own commands and
 * restored for the user's, so traces show only the user's commands.
 */
export function initScript(tag: string, runFile: string): string {
  return [
    // Bash cannot trap a signal that was ignored when it started (as under `deft serve &` in a
    // script), and the INT trap is how a timeout keeps the shell. So start over with SIGINT at
    // its default; the new bash reads on from the next line.
    "if [[ -r /proc/$$/status ]]; then",
    "  while read -r __deft_k __deft_v; do [[ $__deft_k == SigIgn: ]] && break; done </proc/$$/status",
    "  if ((16#${__deft_v:-0} & 2)) && env --default-signal=INT true 2>/dev/null; then",
    "    exec env --default-signal=INT bash --noprofile --norc",
    "  fi",
    "fi",
    "unset __deft_k __deft_v",
    `exec ${MARK_OUT}>&1 ${MARK_ERR}>&2`,
    // `$0` is `bash`, as in a terminal, not bash's full path.
    "BASH_ARGV0=bash",
    `__deft_src=${shellQuote(runFile)}`,
    `__deft_trap=${shellQuote(INT_TRAP)}`,
    "__deft_opts=$-",
    ...readFunction(READ_BYTES, "LC_ALL=C "),
    // Plain text is as many characters as bytes in every locale: no switch to the C locale
    // and back (two setlocale calls, a fifth of a bare call's time).
    ...readFunction(READ_TEXT, ""),
    // Where an interrupt landed: 0 at the run file's top level, 1 deeper in it, 2 elsewhere.
    "__deft_where() {",
    "  local -; builtin set +u",
    "  local depth=${#BASH_SOURCE[@]}",
    '  [[ ${BASH_SOURCE[depth-1]} == "$__deft_src" ]] || return 2',
    "  ((depth == 2)) && return 0",
    "  return 1",
    "}",
    "__deft_done() {",
    "  __deft_status=$? __deft_opts=$-",
    "  builtin set +xv",
    "  builtin trap '' INT",
    "  if [[ ${__deft_errexit-} == *e* ]]; then builtin set -e; fi",
    "  __deft_errexit=",
    "  builtin shopt -s expand_aliases",
    `  builtin alias __deft_run=${shellQuote(RUN_ALIAS)}`,
    // One write per marker: printf writes the format's leading line break on its own (bash's
    // stdout is line-buffered), which costs the reader a wake-up of its own. Echo writes its
    // argument at once; it takes no options in POSIX mode with xpg_echo, so printf stays there.
    "  if [[ :$SHELLOPTS: == *:posix:* ]]; then",
    `    builtin printf '\\n%s:%s:%s:%s\\n' ${tag} "$__deft_status" "$PWD" ${tag} >&${MARK_OUT}`,
    `    builtin printf '\\n%s::%s\\n' ${tag} ${tag} >&${MARK_ERR}`,
    "  else",
    `    builtin echo -nE $'\\n'"${tag}:$__deft_status:$PWD:${tag}"$'\\n' >&${MARK_OUT}`,
    `    builtin echo -nE $'\\n'"${tag}::${tag}"$'\\n' >&${MARK_ERR}`,
    "  fi",
    "}",
    "{ __deft_done;} 2>/dev/null",
    "",
  ].join("\n");
}

/**
 * One of the two functions that read a command off the control pipe: `read -N` counts
 * characters, so a command in bytes is read in the C locale.
 */
function readFunction(name: string, locale: string): string[] {
  return [
    `${name}() {`,
    `  IFS= ${locale}builtin read -r -N "$1" __deft_cmd`,
    `  builtin export ${CALL_TAG}="$2"`,
    // Set again each time: after a trap has returned, bash does not always run it again.
    '  builtin trap "$__deft_trap" INT',
    // Restored as the first line of the eval, so the trace does not show the eval itself.
    "  if [[ $__deft_opts == *[xv]* ]]; then",
    `    __deft_cmd="builtin set -\${__deft_opts//[^xv]/}"$'\\n'"$__deft_cmd"`,
    "  fi",
    "}",
  ];
}

const encoder = new TextEncoder();

/**
 * True when every character is printable ASCII, a tab or a line break: one byte, and one
 * character, in any locale bash can run in (no lead byte of a multibyte character, no escape of a
 * stateful encoding).
 */
function isPlainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || c > 0x7e) return false;
  }
  return true;
}

/**
 * The bytes that run `command` as call number `call`; with `env` (Deft's own variables, such as the
 * tool span's `TRACEPARENT`), the shell exports those first.
 */
export function commandBytes(
  command: string,
  call: number,
  env: Record<string, string> = {},
): Uint8Array {
  let exports = "";
  for (const name in env) exports += `export ${name}=${shellQuote(env[name])};`;
  // Plain text has as many bytes as characters: the line and the command encode in one go.
  if (isPlainText(command)) {
    return encoder.encode(
      `${exports}${READ_TEXT} ${command.length} ${call};__deft_run\n${command}`,
    );
  }
  const body = encoder.encode(command);
  const line = encoder.encode(`${exports}${READ_BYTES} ${body.length} ${call};__deft_run\n`);
  const bytes = new Uint8Array(line.length + body.length);
  bytes.set(line);
  bytes.set(body, line.length);
  return bytes;
}

/** Where a background shell's output and exit status go: named pipes Deft reads. */
export interface JobPipes {
  output: string;
  status: string;
}

/**
 * The command, run in the session shell like any other, that starts `command` as background
 * shell `id` and prints its process id (its group's, in the shell's PID namespace). It runs in a
 * subshell of the session shell (the working directory, variables and functions as they are now)
 * with stdin from /dev/null, stdout and stderr into `pipes.output`:
 *
 * - job control is on while it starts, so the job gets a process group of its own to kill;
 * - the subshell ignores SIGINT and SIGQUIT, as `cmd &` does without job control: a later
 *   command's timeout interrupts the shell's subshells (call 0), and must not end the job;
 * - it is disowned at once: the shell's `jobs` and a bare `wait` in a later command do not see it,
 *   and its end prints no "Done" or "Killed" into a later command's output;
 * - it exports `JOB_TAG`, so what the job starts can be found even after `setsid`;
 * - the command runs in a subshell of its own, with the shell's `-e`, `-x`, `-v` as they were,
 *   and its exit status goes to `pipes.status` however it ended (`exit`, `set -e`, `exec`).
 */
export function backgroundCommand(command: string, id: string, pipes: JobPipes): string {
  return [
    "{ __deft_bo=$-; builtin set +xv; } 2>/dev/null",
    "builtin set -m",
    "( builtin trap '' INT QUIT",
    "  builtin set +e",
    `  builtin export ${JOB_TAG}=${shellQuote(id)}`,
    `  ( builtin set -"\${__deft_bo//[^exv]/}"; builtin eval ${shellQuote(command)}`,
    "  )",
    `  builtin printf '%s' "$?" >${shellQuote(pipes.status)}`,
    `) >${shellQuote(pipes.output)} 2>&1 </dev/null &`,
    'builtin disown "$!"',
    "builtin printf '%s\\n' \"$!\"",
    "[[ $__deft_bo == *m* ]] || builtin set +m",
    "builtin unset __deft_bo",
  ].join("\n");
}

/** The exit status and working directory from a stdout marker's payload. */
export function parseMarker(payload: string): { status: number; cwd: string } {
  const colon = payload.indexOf(":");
  const status = Number(payload.slice(0, colon));
  return { status: Number.isInteger(status) ? status : -1, cwd: payload.slice(colon + 1) };
}

/**
 * Error messages name the run file (`/tmp/…/run: line 2: foo: command not found`); shows them
 * as `bash -c` would (`bash: line 2: …`).
 */
export function tidyMessages(text: string, runFile: string): string {
  if (!text.includes(runFile)) return text;
  return text.replaceAll(`${runFile}: eval: line `, "bash: line ").replaceAll(
    `${runFile}: line `,
    "bash: line ",
  );
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
