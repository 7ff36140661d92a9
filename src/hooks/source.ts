/**
 * Which file a loaded config's hooks came from: the file itself, except for an untrusted
 * repository's file layered over the user's config, whose hooks can only be the user's (the
 * repository's own `hooks:` were dropped, config/trust.ts).
 */
import type { LoadedConfig } from "../config/load.ts";
import { configCandidates } from "../config/locate.ts";
import { userConfigPath } from "../config/trust.ts";

/** The config file that set `loaded`'s hooks, when there is one. */
export function hooksSource(loaded: LoadedConfig): string | undefined {
  if (!loaded.path || loaded.fromRepository) return loaded.path;
  const local = loaded.local ??
    configCandidates().some((c) => c.local && c.path === loaded.path);
  return local ? userConfigPath() ?? loaded.path : loaded.path;
}
