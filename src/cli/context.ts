/** Builds the tool context shared by the pipeline commands (`tool`, `serve`, `mcp`). */
import type { ToolContext } from "../tools/base.ts";
import { registeredToolNames, resolveToolName } from "../tools/catalog.ts";
import { checkSandbox, parseDeadlines } from "../tools/host/mod.ts";
import { UsageError } from "./io.ts";
import { workspaceOf } from "./workspace_arg.ts";
import { loadToolConfig, resolveToolSettings } from "../config/tool_settings.ts";
import type { SandboxMode } from "../policy/sandbox.ts";

// Session assembly (src/agent/session.ts) needs these too, so they live with the tool host.
export { checkSandbox, hostDirs } from "../tools/host/mod.ts";
// The workspace alone, for commands that run no tool (`deft sessions`), lives on its own.
export { workspaceOf } from "./workspace_arg.ts";

/** Options every tool-running command accepts. */
export interface ToolCommandOptions {
  workingDir?: string;
  sandbox?: SandboxMode;
  provider?: string;
  /** `--deadline`: `SECONDS` or `TOOL=SECONDS,...`. */
  deadline?: string;
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
  // The default sandbox is decided (bwrap probed) only if a tool that needs it is built.
  const settings = resolveToolSettings(await loadToolConfig(), {
    sandbox: opts.sandbox,
    decideOnRead: true,
  });
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
  checkSandbox(settings, tools, workspace);
  return { provider: opts.provider ?? "openai", workspace, settings };
}
