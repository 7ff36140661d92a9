/** Where configuration files are looked for; kept light so listing commands can ask cheaply. */
import { deftConfigDir } from "../policy/dirs.ts";
import { readEnv } from "../env.ts";

/**
 * Where to look for the config file, in order: `--config-file`, `DEFT_CONFIG`, `./deft.yaml`,
 * `./trae_config.yaml`, then the user config dir. An explicitly named file must exist. With
 * `folder` (an ACP session's), the repository's files are looked for there, not in the current
 * directory.
 */
export function configCandidates(
  explicit?: string,
  folder?: string,
): { path: string; explicit: boolean; local?: boolean }[] {
  if (explicit) return [{ path: explicit, explicit: true }];
  const fromEnv = readEnv("DEFT_CONFIG");
  if (fromEnv) return [{ path: fromEnv, explicit: true }];
  // `local`: the file belongs to the folder (a repository), untrusted unless `deft trust` says so.
  const candidates: { path: string; explicit: boolean; local?: boolean }[] = [
    "deft.yaml",
    "trae_config.yaml",
  ].map((name) => ({ path: folder ? `${folder}/${name}` : name, explicit: false, local: true }));
  const dir = deftConfigDir();
  if (dir) candidates.push({ path: `${dir}/config.yaml`, explicit: false });
  return candidates;
}
