/**
 * What must hold before a session (or a pipeline command) builds its hosted tools: a sandbox that
 * can actually start, checked once at start rather than at the first call.
 */
import type { ToolSettings } from "../base.ts";
import { entryOf, resolveToolName } from "../catalog.ts";
import { checkControlWorkspace, findBwrap, SandboxUnavailableError } from "../../policy/sandbox.ts";
import { UsageError } from "../../errors.ts";

/**
 * Reports a missing bubblewrap at start, not at the first call, when a sandbox is asked for and
 * `tools` (default: all) include one that touches the system: the shell, and the file tools,
 * which then run inside bubblewrap too. With `workspace`, a writable sandbox in one of Deft's
 * control folders (its config, state or cache, Deno's cache) is refused here too.
 */
export function checkSandbox(
  settings: ToolSettings,
  tools?: readonly string[],
  workspace?: string,
): void {
  const confined = (name: string) => {
    const found = resolveToolName(name);
    return found === undefined || entryOf(found).runs !== "in-process";
  };
  // Tools that run in this process need no sandbox: the default one is not even decided.
  if (tools && !tools.some(confined)) return;
  if ((settings.sandbox ?? "none") === "none") return;
  try {
    findBwrap(settings.bwrapPath);
    if (workspace) checkControlWorkspace(workspace, settings.sandbox ?? "none");
  } catch (e) {
    if (e instanceof SandboxUnavailableError) throw new UsageError(e.message);
    throw e;
  }
}
