/**
 * The configuration without a file, and whether there is a file, without the schema: the
 * interactive start (src/cli/interactive/preflight.ts) draws its prompt before the config schema
 * (zod, the YAML parser) is loaded when no file is found. load.ts's `defaultConfig()` is the
 * schema's word; tests/unit/config/defaults_test.ts holds the two equal.
 */
import type { DeftConfig } from "./load.ts";
import { configCandidates } from "./locate.ts";

const DEFAULTS = {
  model_providers: {},
  models: {},
  agents: {},
  mcp_servers: {},
  allow_mcp_servers: [],
  allow_network: false,
  checkpoints: true,
  trusted_folders: [],
  prices: {},
  container: { keep: false, memory: "4g", pids_limit: 4096, allow_network: false },
  hooks: {},
  tool_settings: {},
};

/** The configuration used when no file is found, as `configSchema.parse({})` gives it. */
export function defaultConfigWithoutSchema(): DeftConfig {
  return structuredClone(DEFAULTS) as DeftConfig;
}

/**
 * Whether `loadConfig(explicit, { folder })` would read a file: a file named on the command line
 * or in DEFT_CONFIG, or anything at all at a default location (what it is, and whether it can be
 * read, is the loader's to judge and explain). Nothing is read or followed here.
 */
export async function configFileGiven(explicit?: string, folder?: string): Promise<boolean> {
  for (const candidate of configCandidates(explicit, folder)) {
    if (candidate.explicit) return true;
    try {
      await Deno.lstat(candidate.path);
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotCapable) continue;
      return true;
    }
  }
  return false;
}
