/** `deft config`: the resolved configuration, with keys and secrets masked. */
import { stringify } from "yaml";
import { loadConfig } from "../config/load.ts";
import { type ConfigOverrides, resolveRunConfig } from "../config/resolve.ts";
import { writeStderr, writeStdout } from "./io.ts";
import { maskForDisplay } from "../policy/secrets.ts";
import type { ToolSettings } from "../tools/base.ts";
import { terminalText } from "../policy/terminal_text.ts";
import { networkForDisplay, networkScope } from "../config/network.ts";
import { hookEntries } from "../hooks/hooks.ts";

/** Options of `deft config`. */
export interface ConfigOptions extends ConfigOverrides {
  configFile?: string;
}

/** Shows a secret without revealing it: `****wxyz` (at most the last 4), or `(not set)`. */
export const mask = maskForDisplay;

// Header and variable names whose values are secrets (Authorization, Cookie, X-Api-Key …).
const SECRET_NAME = /key|token|secret|password|passwd|credential|auth|cookie|session/i;

function maskRecord(record?: Record<string, string>): Record<string, string> | undefined {
  if (!record) return undefined;
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [k, SECRET_NAME.test(k) ? mask(v) : v]),
  );
}

/** Prints the resolved configuration as YAML; returns the exit code. */
export async function configCommand(opts: ConfigOptions): Promise<number> {
  const loaded = await loadConfig(opts.configFile);
  for (const warning of loaded.warnings) writeStderr(`warning: ${terminalText(warning)}`);
  const run = resolveRunConfig(loaded, opts, undefined, false);
  const model = (m: typeof run.model) => ({
    name: m.name,
    provider: {
      ...m.provider,
      api_key: mask(m.provider.api_key),
      key_variable: m.provider.keyVariable,
      keyVariable: undefined,
    },
    settings: m.settings,
  });
  const tools = toolSettingsAsInFile(run.toolSettings);
  const shell = tools.shell_environment as ToolSettings["shellEnvironment"];
  const shown = {
    config_file: run.configPath ?? "(none found; defaults)",
    model: model(run.model),
    lakeview: run.lakeview ? model(run.lakeview) : null,
    agent: run.agent,
    sandbox: tools.sandbox,
    allow_network: tools.allow_network,
    network: networkForDisplay(run.toolSettings.network),
    ...scope(
      networkScope(
        run.toolSettings.network,
        tools.sandbox as string | undefined,
        run.mcpServers,
        hookEntries(loaded.config.hooks).map((e) => e.hook.sandbox),
      ),
    ),
    ...(shell ? { shell_environment: { ...shell, set: maskRecord(shell.set) } } : {}),
    tool_settings: tools.tool_settings,
    mcp_servers: Object.fromEntries(
      Object.entries(run.mcpServers).map(([name, s]) => [name, {
        ...s,
        env: maskRecord(s.env),
        headers: maskRecord(s.headers),
      }]),
    ),
    allow_mcp_servers: run.allowMcpServers,
  };
  await writeStdout(stringify(shown, { aliasDuplicateObjects: false }));
  return 0;
}

/** `{ network_scope }` when there is one to show, else nothing. */
function scope(shown: unknown): Record<string, unknown> {
  return shown === undefined ? {} : { network_scope: shown };
}

/**
 * Each resolved tool setting under the key the config file gives it (`allowNetwork` is
 * `allow_network`, `bashTimeoutSeconds` is `tool_settings.bash_timeout`), or null for the ones
 * Deft sets itself at run time. A Record over every key, so a new setting cannot reach the
 * output under its code name: the compiler asks where it goes.
 */
const FILE_KEYS: Record<keyof ToolSettings, string | null> = {
  sandbox: "sandbox",
  allowNetwork: "allow_network",
  network: null,
  networkProxy: null,
  networkForwarded: null,
  shellEnvironment: "shell_environment",
  bashTimeoutSeconds: "tool_settings.bash_timeout",
  outputLimit: "tool_settings.output_limit",
  maxFileBytes: "tool_settings.max_file_bytes",
  ckgDir: "tool_settings.ckg_dir",
  deadlines: "tool_settings.deadlines",
  bwrapPath: null,
  unsharePath: null,
  tempDir: null,
  singleCall: null,
};

/** The tool settings laid out as in the config file: top-level keys and `tool_settings`. */
export function toolSettingsAsInFile(
  settings: ToolSettings,
): Record<string, unknown> & { tool_settings: Record<string, unknown> } {
  const out: Record<string, unknown> & { tool_settings: Record<string, unknown> } = {
    tool_settings: {},
  };
  for (const [key, value] of Object.entries(settings)) {
    const name = FILE_KEYS[key as keyof ToolSettings];
    if (!name || value === undefined) continue;
    if (name.startsWith("tool_settings.")) {
      out.tool_settings[name.slice("tool_settings.".length)] = value;
    } else out[name] = value;
  }
  return out;
}
