/**
 * One resolution of the tool and sandbox settings for every command (`run`, `interactive`,
 * `tool`, `serve`, `mcp`): command-line flags > environment (`DEFT_SANDBOX`,
 * `DEFT_ALLOW_NETWORK`) > config file > defaults. The pipeline commands load the config file
 * only when one exists, so their start-up stays light.
 */
import type { ToolSettings } from "../tools/base.ts";
import type { DeftConfig } from "./schema.ts";
import { configCandidates } from "./locate.ts";
import { UsageError } from "../errors.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { readEnv } from "../env.ts";
import { defaultSandbox, SANDBOX_MODES, type SandboxMode } from "../policy/sandbox.ts";

/** What the command line can set for tools. */
export interface ToolFlags {
  sandbox?: SandboxMode;
  /**
   * Decide the default sandbox when it is first read, not now: for the pipeline commands, which
   * may run no sandboxed tool at all (`deft tool task_done`, `deft tools`). A session decides at
   * once, so a notice that bubblewrap cannot start comes before anything else is drawn.
   */
  decideOnRead?: boolean;
}

/** The file's part of the configuration that tools read. */
export type ToolConfig = Pick<
  DeftConfig,
  "sandbox" | "allow_network" | "network" | "tool_settings" | "shell_environment"
>;

/** The tool settings for `flags` over the environment over `config` over the defaults. */
export function resolveToolSettings(
  config: Partial<ToolConfig>,
  flags: ToolFlags,
  env: (name: string) => string | undefined = readEnv,
): ToolSettings {
  const fromEnv = env("DEFT_SANDBOX");
  if (fromEnv !== undefined && !(SANDBOX_MODES as readonly string[]).includes(fromEnv)) {
    throw new UsageError(
      `DEFT_SANDBOX is '${fromEnv}'; use one of ${SANDBOX_MODES.join(", ")}, or unset it.`,
    );
  }
  const network = env("DEFT_ALLOW_NETWORK");
  if (network !== undefined && !["0", "1", "true", "false"].includes(network)) {
    throw new UsageError(`DEFT_ALLOW_NETWORK is '${network}'; use 1 or 0, or unset it.`);
  }
  const tool = config.tool_settings ?? {};
  const asked = flags.sandbox ?? fromEnv as SandboxMode | undefined ?? config.sandbox;
  // `sandbox` stays the first key, as in the file (`deft config` prints the settings in order).
  const settings = {} as ToolSettings;
  if (asked !== undefined) settings.sandbox = asked;
  else if (flags.decideOnRead) decideSandboxOnFirstRead(settings);
  else settings.sandbox = defaultSandboxOnce();
  settings.allowNetwork = network !== undefined
    ? network === "1" || network === "true"
    : config.allow_network ?? false;
  // The whole network (allow_network, DEFT_ALLOW_NETWORK=1) leaves no list to apply.
  if (config.network && !settings.allowNetwork) settings.network = config.network;
  if (settings.network && asked === "none" && !networkNoticeShown) {
    networkNoticeShown = true;
    console.error(
      "deft: the network list (network:) is not enforced with sandbox none: the shell has " +
        "your whole network. Use --sandbox workspace-write to confine it to the list.",
    );
  }
  if (tool.bash_timeout !== undefined) settings.bashTimeoutSeconds = tool.bash_timeout;
  if (tool.output_limit !== undefined) settings.outputLimit = tool.output_limit;
  if (tool.max_file_bytes !== undefined) settings.maxFileBytes = tool.max_file_bytes;
  if (tool.ckg_dir !== undefined) settings.ckgDir = tool.ckg_dir;
  if (tool.deadlines !== undefined) settings.deadlines = tool.deadlines;
  if (config.shell_environment !== undefined) settings.shellEnvironment = config.shell_environment;
  return settings;
}
/**
 * Makes `settings.sandbox` the default sandbox, decided when it is first read (or replaced when it
 * is first written): a command that starts no sandboxed child and prints no settings (`deft tool
 * task_done`, `deft tools`) never starts bubblewrap to probe it. Whatever reads the setting (the
 * placement of a tool, a sandboxed child's policy, a copy or a serialization of the settings)
 * gets the same answer as before, and a bwrap that cannot start still gives the notice and
 * `none`, at that first read.
 */
function decideSandboxOnFirstRead(settings: ToolSettings): void {
  const settle = (mode: SandboxMode | undefined) => {
    Object.defineProperty(settings, "sandbox", {
      value: mode,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  };
  Object.defineProperty(settings, "sandbox", {
    get: () => {
      const mode = defaultSandboxOnce();
      settle(mode);
      return mode;
    },
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

/**
 * The sandbox when nobody asked for one: `workspace-write` where bubblewrap works, else `none`,
 * said once per process on stderr (what is unprotected, how to fix it).
 */
function defaultSandboxOnce(): SandboxMode {
  const chosen = defaultSandbox();
  if (chosen.notice && !noticeShown) {
    noticeShown = true;
    console.error(`deft: ${chosen.notice}`);
  }
  return chosen.mode;
}

let noticeShown = false;
let networkNoticeShown = false;

/**
 * The config file's tool part, for the pipeline commands: the same search as `deft run`
 * (`DEFT_CONFIG`, `./deft.yaml`, `./trae_config.yaml`, the user config dir). The parser loads
 * only when a file is there.
 */
export async function loadToolConfig(): Promise<Partial<ToolConfig>> {
  const candidates = configCandidates();
  const present = candidates.some((c) => c.explicit || exists(c.path));
  if (!present) return {};
  const { loadConfig } = await import("./load.ts");
  const loaded = await loadConfig();
  for (const warning of loaded.warnings) console.error(`deft: warning: ${terminalText(warning)}`);
  return loaded.config;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (e) {
    // A file Deno may not look at is skipped, as `deft run` skips it.
    return !(e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable);
  }
}
