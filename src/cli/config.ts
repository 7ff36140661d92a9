/** `deft config`: the resolved configuration, with keys and secrets masked. */
import { stringify } from "yaml";
import { loadConfig } from "../config/load.ts";
import { type ConfigOverrides, resolveRunConfig } from "../config/resolve.ts";
import { writeStderr, writeStdout } from "./io.ts";
import { maskForDisplay } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";

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
  const shown = {
    config_file: run.configPath ?? "(none found; defaults)",
    model: model(run.model),
    lakeview: run.lakeview ? model(run.lakeview) : null,
    agent: run.agent,
    tool_settings: {
      ...run.toolSettings,
      shellEnvironment: run.toolSettings.shellEnvironment && {
        ...run.toolSettings.shellEnvironment,
        set: maskRecord(run.toolSettings.shellEnvironment.set),
      },
    },
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
