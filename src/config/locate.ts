/** Where configuration files are looked for; kept light so listing commands can ask cheaply. */

/**
 * Where to look for the config file, in order: `--config-file`, `DEFT_CONFIG`, `./deft.yaml`,
 * `./trae_config.yaml`, then the user config dir. An explicitly named file must exist.
 */
export function configCandidates(explicit?: string): { path: string; explicit: boolean }[] {
  if (explicit) return [{ path: explicit, explicit: true }];
  const fromEnv = Deno.env.get("DEFT_CONFIG");
  if (fromEnv) return [{ path: fromEnv, explicit: true }];
  const candidates = ["deft.yaml", "trae_config.yaml"].map((path) => ({ path, explicit: false }));
  const home = Deno.env.get("HOME");
  const configHome = Deno.env.get("XDG_CONFIG_HOME") ?? (home ? `${home}/.config` : undefined);
  if (configHome) candidates.push({ path: `${configHome}/deft/config.yaml`, explicit: false });
  return candidates;
}
