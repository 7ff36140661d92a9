/** Builds the tool context shared by the pipeline commands (`tool`, `serve`, `mcp`). */
import type { ToolContext, ToolSettings } from "../tools/base.ts";
import { realWorkspace } from "../policy/workspace.ts";
import { deftCacheDir, tempRoot } from "../policy/dirs.ts";
import type { HostDirs } from "../tools/host/remote.ts";
import { registeredToolNames, resolveToolName } from "../tools/catalog.ts";
import { parseDeadlines } from "../tools/host/deadlines.ts";
import { UsageError } from "./io.ts";

/** Options every tool-running command accepts. */
export interface ToolCommandOptions {
  workingDir?: string;
  sandbox?: ToolSettings["sandbox"];
  provider?: string;
  /** `--deadline`: `SECONDS` or `TOOL=SECONDS,...`. */
  deadline?: string;
}

/** The real path of the workspace `-w DIR` names (default: the current directory). */
export async function workspaceOf(workingDir: string | undefined): Promise<string> {
  const dir = workingDir ?? Deno.cwd();
  try {
    return await realWorkspace(dir);
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable) {
      throw new UsageError(
        `Deno's permissions do not let Deft read the workspace ${dir}: add it to --allow-read, ` +
          "or pass another directory with -w.",
      );
    }
    const message = (e as Error).message.replace(/\.?$/, ".");
    throw new UsageError(`${message} Pass an existing directory with -w.`);
  }
}

/** Resolves the workspace (default: the current directory) and the tool settings. */
export async function toolContext(opts: ToolCommandOptions): Promise<ToolContext> {
  const workspace = await workspaceOf(opts.workingDir);
  const settings: ToolSettings = {};
  if (opts.sandbox) settings.sandbox = opts.sandbox;
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
  return { provider: opts.provider ?? "openai", workspace, settings };
}

/** The directories besides the workspace that hosted tools may use. */
export function hostDirs(settings: ToolSettings): HostDirs {
  return { cache: settings.ckgDir ?? deftCacheDir(), temp: tempRoot() };
}
