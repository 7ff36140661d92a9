/**
 * The `bash` tool as the model sees it: name, description, parameters; and its two companions
 * for background shells, `bash_output` and `kill_shell`.
 */
import type { CallEffect } from "../base.ts";
import type { ToolDefinitionSource } from "../catalog_types.ts";

/** `bash`'s model-facing definition (kept apart from the implementation, which loads lazily). */
export const BASH: ToolDefinitionSource = {
  name: "bash",
  description: [
    "Run commands in a bash shell.",
    "* The shell persists across calls: the working directory, variables, functions and aliases " +
    "stay set. The first call starts in the workspace.",
    "* Commands get no standard input (it is /dev/null): never wait for a prompt. Use " +
    "non-interactive flags (`-y`, `--no-edit`, `git --no-pager`).",
    "* Long-running servers, watchers and long test runs: pass `run_in_background: true`. The " +
    "call answers at once with a `shell_id`; read what the command prints with `bash_output` " +
    "and stop it with `kill_shell`. It runs in this shell's sandbox and directory and ends " +
    "when the session ends or the shell restarts.",
    "* Output that is too long is shown as head and tail; the full text is saved to a file whose " +
    "path the result names, so you can read it by range.",
    "* A command that runs past its timeout is killed; the shell stays usable.",
    "* `restart: true` gives a fresh shell.",
  ].join("\n"),
  parameters: [
    {
      name: "command",
      type: "string",
      description: "The bash command to run. Required unless `restart` is true.",
    },
    {
      name: "restart",
      type: "boolean",
      description: "Restart the shell (state is lost). `command` is ignored.",
    },
    {
      name: "timeout",
      type: "number",
      description: "Seconds before the command is killed (default 120; not for background).",
    },
    {
      name: "run_in_background",
      type: "boolean",
      description: "Start the command in the background and answer at once with its " +
        "`shell_id` (see bash_output, kill_shell).",
    },
  ],
};

/** The `shell_id` that makes `bash_output` list the session's background shells, reading none. */
export const LIST_SHELLS = "*";

/**
 * The argument of Deft's own `kill_shell` call after a rewind (never the model's: it is not in the
 * schema, so a model's call naming it is refused before it runs): an ISO time; the background
 * shells started after it are killed.
 */
export const STARTED_AFTER = "started_after";

/** `bash_output`: the new output and the state of a background shell. */
export const BASH_OUTPUT: ToolDefinitionSource = {
  name: "bash_output",
  description: [
    "Read a background shell's output (one started by bash with `run_in_background: true`).",
    "* Returns only what it printed since the last read (stdout and stderr together), and its " +
    "status: running, exited (with its exit code) or killed. It answers at once: call it again " +
    "later for more.",
    "* `filter`: a regular expression (JavaScript syntax); only the new lines it matches are " +
    "returned, and the other new lines are discarded.",
    "* Up to 1 MiB of unread output is kept per shell; what was dropped is said.",
  ].join("\n"),
  parameters: [
    {
      name: "shell_id",
      type: "string",
      description: "The `shell_id` the bash call answered with; `*` lists this session's " +
        "background shells (id, status, unread bytes, command) without reading any.",
      required: true,
    },
    {
      name: "filter",
      type: "string",
      description: "Only return new lines matching this regular expression.",
    },
  ],
};

/** `kill_shell`: ends a background shell and everything it started. */
export const KILL_SHELL: ToolDefinitionSource = {
  name: "kill_shell",
  description: "Stop a background shell started by bash with `run_in_background: true`: the " +
    "command and every process it started (its whole process group) are killed.",
  parameters: [
    {
      name: "shell_id",
      type: "string",
      description: "The `shell_id` the bash call answered with.",
      required: true,
    },
  ],
};

/**
 * What a `bash` call does: runs its command (one let through unasked in a fresh read-only sandbox,
 * see `CallPlan`); a restart only replaces the shell.
 */
export function bashEffects(args: Record<string, unknown>): CallEffect {
  if (args.restart === true) return { kind: "other" };
  // Without a command the call fails before anything runs. A background command runs in the
  // session's shell, never in a fresh read-only one: the gate asks about it as about any other.
  return typeof args.command === "string"
    ? { kind: "command", command: args.command, confinesUnasked: args.run_in_background !== true }
    : { kind: "other" };
}

/** The seconds after which a `bash` call kills its own command, when the call says. */
export function bashTimeout(args: Record<string, unknown>): number | undefined {
  return typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : undefined;
}
