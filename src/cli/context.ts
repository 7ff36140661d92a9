/** Builds the tool context shared by the pipeline commands (`tool`, `serve`, `mcp`). */
import type { ToolContext } from "../tools/base.ts";
import { realWorkspace } from "../policy/workspace.ts";
import { registeredToolNames, resolveToolName } from "../tools/catalog.ts";
import { checkSandbox, parseDeadlines } from "../tools/host/mod.ts";
import { UsageError } from "./io.ts";
import { loadToolConfig, resolveToolSettings } from "../config/tool_settings.ts";
import type { SandboxMode } from "../policy/sandbox.ts";

// Session assembly (src/agent/session.ts) needs these too, so they live with the tool host.
export { checkSandbox, hostDirs } from "../tools/host/mod.ts";

/** Options every tool-running command accepts. */
export interface ToolCommandOptions {
  workingDir?: string;
  sandbox?: SandboxMode;
  provider?: string;
  /** `--deadline`: `SECONDS` or `TOOL=SECONDS,...`. */
  deadline?: string;
}

/** The real path of the workspace `-w DIR` names (default: the current directory). */
export async function workspaceOf(workingDir: string | undefined): Promise<string> {
  const dir = workingDir ?? currentDirectory();
  try {
    return await realWorkspace(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) {
      throw new UsageError(
        `Deno's permissions do not let Deft read the workspace ${dir}: add it to --allow-read ` +
          "(a symbolic link and its target both: Deno grants paths as written), " +
          "or pass another directory with -w.",
      );
    }
    const message = (e as Error).message.replace(/\.?$/, ".");
    throw new UsageError(`${message} Pass an existing directory with -w.`);
  }
}

/**
 * Resolves the workspace (default: the current directory) and the tool settings, the same way
 * `deft run` does: flags > environment > config file > defaults.
 */
export async function toolContext(
  opts: ToolCommandOptions,
  tools?: readonly string[],
): Promise<ToolContext> {
  const workspace = await workspaceOf(opts.workingDir);
  const settings = resolveToolSettings(await loadToolConfig(), { sandbox: opts.sandbox });
  if (opts.deadline !== undefined) {
    try {
      settings.deadlines = parseDeadlines(opts.deadline);
      for (const name of Object.keys(settings.deadlines)) {
        if (name !== "default" && !resolveToolName(name)) {
          throw new Error(
            `--deadline: '${name}' is not a tool; use one of ${
              registeredToolNames().join(", ")
            } or 'default'`,
          );
        }
      }
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  checkSandbox(settings, tools);
  return { provider: opts.provider ?? "openai", workspace, settings };
}

function currentDirectory(): string {
  try {
    return Deno.cwd();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable)) throw e;
    throw new UsageError(
      "Deno's permissions do not let Deft read the current directory, the default workspace: " +
        "pass the workspace with -w DIR, or add it to --allow-read.",
    );
  }
}
