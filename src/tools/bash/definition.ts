/** The `bash` tool as the model sees it: name, description, parameters. */
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
    "* Long-running servers: start them in the background (`cmd > log 2>&1 &`).",
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
      description: "Seconds before the command is killed (default 120).",
    },
  ],
};

/**
 * What a `bash` call does: runs its command (one let through unasked in a fresh read-only sandbox,
 * see `CallPlan`); a restart only replaces the shell.
 */
export function bashEffects(args: Record<string, unknown>): CallEffect {
  if (args.restart === true) return { kind: "other" };
  // Without a command the call fails before anything runs.
  return typeof args.command === "string"
    ? { kind: "command", command: args.command, confinesUnasked: true }
    : { kind: "other" };
}

/** The seconds after which a `bash` call kills its own command, when the call says. */
export function bashTimeout(args: Record<string, unknown>): number | undefined {
  return typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : undefined;
}
