/**
 * The tools every command runs (`run`, `interactive`, `tool`, `serve`, `mcp`): the one factory,
 * `createTools` (../registry.ts), given the hosts to run them in. The factory builds the stand-ins
 * and decides where each tool runs (`placeOf`); this layer only supplies a host per place.
 */
import { readEnv } from "../../env.ts";
import { deftCacheDir, tempRoot } from "../../policy/dirs.ts";
import type { Tool, ToolContext, ToolSettings } from "../base.ts";
import { DEFAULT_TOOL_NAMES, resolveToolNames } from "../catalog.ts";
import { createTools, isSandboxed, placeOf } from "../registry.ts";
import { type LinkStarter, startWorkerLink } from "./link.ts";
import { type HostDirs, ToolHost } from "./tool_host.ts";

/**
 * Builds the named tools (default: the default set) through the one factory, `createTools`,
 * with the tool hosts every command uses: a permission-fenced worker and, with a sandbox, the
 * sandboxed host, each started on its first call. Only definitions load here, so start-up stays
 * fast. Throws `UnknownToolError`. `DEFT_TOOLS_IN_PROCESS=1` keeps every tool in this process
 * (for debugging). With `only` (a container's host), every hosted tool goes there.
 */
export async function createHostedTools(
  context: ToolContext,
  names: readonly string[] = DEFAULT_TOOL_NAMES,
  dirs: HostDirs = {},
  only?: LinkStarter,
): Promise<Tool[]> {
  if (only) {
    return createTools(context, names, (_, group) => new ToolHost(context, group, dirs, only));
  }
  await startNetworkProxy(context.settings);
  if (readEnv("DEFT_TOOLS_IN_PROCESS") === "1") return createTools(context, names);
  // The sandboxed host's code loads only when a tool goes there, off every other start-up path.
  const hosted = resolveToolNames(names).filter((n) => isSandboxed(placeOf(n, context.settings)));
  let sandboxed: typeof import("./sandboxed.ts").sandboxedLinkStarter | undefined;
  if (hosted.length > 0) {
    const module = await import("./sandboxed.ts");
    await module.warmSandboxedCode(hosted);
    sandboxed = module.sandboxedLinkStarter;
  }
  return createTools(
    context,
    names,
    (place, group) =>
      new ToolHost(
        context,
        group,
        dirs,
        isSandboxed(place) && sandboxed ? sandboxed(context.settings, place) : startWorkerLink,
      ),
  );
}

/**
 * With a network list (`network:`) and a sandbox, starts this process's proxy for it and records
 * its socket in `settings`, which the tools' hosts and the shells they start get; the sandbox
 * then reaches the allowed hosts through it and nothing else (policy/network). Loaded only then.
 */
async function startNetworkProxy(settings: ToolSettings): Promise<void> {
  if (!settings.network || settings.allowNetwork || settings.networkProxy) return;
  // Only now: reading `sandbox` decides the default sandbox, which probes bubblewrap; a call that
  // needs no sandbox (task_done) must not pay for it.
  if ((settings.sandbox ?? "none") === "none") return;
  const { ensureNetworkProxy } = await import("../../policy/network/mod.ts");
  settings.networkProxy = (await ensureNetworkProxy(settings.network)).socketPath;
}

/** The directories besides the workspace that hosted tools may use. */
export function hostDirs(settings: ToolSettings): HostDirs {
  return { cache: settings.ckgDir ?? deftCacheDir(), temp: tempRoot() };
}
