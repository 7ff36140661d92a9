/** Builds the tool context shared by the pipeline commands (`tool`, `serve`, `mcp`). */
import type { ToolContext, ToolSettings } from "../tools/base.ts";
import { realWorkspace } from "../policy/workspace.ts";
import { deftCacheDir, tempRoot } from "../policy/dirs.ts";
import type { HostDirs } from "../tools/host/remote.ts";
import { entryOf, registeredToolNames, resolveToolName } from "../tools/catalog.ts";
import { parseDeadlines } from "../tools/host/deadlines.ts";
import { UsageError } from "./io.ts";
import { loadToolConfig, resolveToolSettings } from "../config/tool_settings.ts";
import {
  findBwrap,
  type SandboxMode as SandboxSetting,
  SandboxUnavailableError,
} from "../policy/sandbox.ts";

/** Options every tool-running command accepts. */
export interface ToolCommandOptions {
  workingDir?: string;
  sandbox?: SandboxSetting;
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

/**
 * Reports a missing bubblewrap at start, not at the first call, when a sandbox is asked for and
 * `tools` (default: all) include one that touches the system: the shell, and the file tools,
 * which then run inside bubblewrap too.
 */
export function checkSandbox(settings: ToolSettings, tools?: readonly string[]): void {
  if ((settings.sandbox ?? "none") === "none") return;
  const confined = (name: string) => {
    const found = resolveToolName(name);
    return found === undefined || entryOf(found).runs !== "in-process";
  };
  if (tools && !tools.some(confined)) return;
  try {
    findBwrap(settings.bwrapPath);
  } catch (e) {
    if (e instanceof SandboxUnavailableError) throw new UsageError(e.message);
    throw e;
  }
}

/** The directories besides the workspace that hosted tools may use. */
export function hostDirs(settings: ToolSettings): HostDirs {
  return { cache: settings.ckgDir ?? deftCacheDir(), temp: tempRoot() };
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
