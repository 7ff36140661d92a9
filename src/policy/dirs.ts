/** Deft's own directories outside any workspace: its cache and its temporary files. */

import { readEnv as env } from "../env.ts";

/** `$DEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/deft`, else `~/.cache/deft`, else a temp folder. */
export function deftCacheDir(): string {
  const explicit = env("DEFT_CACHE_DIR");
  if (explicit) return explicit;
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/deft`;
  const home = env("HOME") ?? env("USERPROFILE");
  if (home) return `${home}/.cache/deft`;
  return `${tempRoot()}/deft-cache`;
}

/** The system's temporary directory. */
export function tempRoot(): string {
  return env("TMPDIR") ?? env("TMP") ?? env("TEMP") ?? "/tmp";
}
