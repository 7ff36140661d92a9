/** Where configuration files are looked for; kept light so listing commands can ask cheaply. */

/**
 * Where to look for the config file, in order: `--config-file`, `DEFT_CONFIG`, `./deft.yaml`,
 * `./trae_config.yaml`, then the user config dir. An explicitly named file must exist.
 */
export function configCandidates(explicit?: string): { path: string; explicit: boolean }[] {
  if (explicit) return [{ path: explicit, explicit: true }];
  const fromEnv = readEnv("DEFT_CONFIG");
  if (fromEnv) return [{ path: fromEnv, explicit: true }];
  const candidates = ["deft.yaml", "trae_config.yaml"].map((path) => ({ path, explicit: false }));
  const home = readEnv("HOME");
  const configHome = readEnv("XDG_CONFIG_HOME") ?? (home ? `${home}/.config` : undefined);
  if (configHome) candidates.push({ path: `${configHome}/deft/config.yaml`, explicit: false });
  return candidates;
}

// Without --allow-env Deft still starts: an environment it may not read sets nothing.
function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}
