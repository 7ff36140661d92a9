/**
 * Deft's own directories outside any workspace: its cache, its state, the user's config, and its
 * temporary files.
 */

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

/** The user's config folder for Deft: `$XDG_CONFIG_HOME/deft`, else `~/.config/deft`. */
export function deftConfigDir(): string | undefined {
  const home = env("HOME");
  const configHome = env("XDG_CONFIG_HOME") ?? (home ? `${home}/.config` : undefined);
  return configHome ? `${configHome}/deft` : undefined;
}

/** Deft's state folder: `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`. */
export function deftStateDir(): string {
  const home = env("HOME") ?? "/tmp";
  return `${env("XDG_STATE_HOME") ?? `${home}/.local/state`}/deft`;
}

/**
 * Where Deno keeps its caches (compiled modules, npm packages): `$DENO_DIR`, else Deno's default
 * (`~/Library/Caches/deno` on macOS, `$XDG_CACHE_HOME/deno` or `~/.cache/deno` elsewhere).
 */
export function denoDir(): string | undefined {
  const explicit = env("DENO_DIR");
  if (explicit) return explicit;
  const home = env("HOME");
  const caches = Deno.build.os === "darwin"
    ? home && `${home}/Library/Caches`
    : env("XDG_CACHE_HOME") ?? (home ? `${home}/.cache` : undefined);
  return caches ? `${caches}/deno` : undefined;
}

/** One place whose contents decide what Deft runs next, and what it is, for messages. */
export interface ControlPlace {
  path: string;
  what: string;
  /** For a file: what it is made with when missing, so that it can be covered (else a folder). */
  missing?: string;
}

/**
 * The places whose contents decide what Deft runs next, on the host: the user's config (hooks,
 * MCP servers, trusted folders, approval rules), Deft's state (sessions, checkpoints, per-project
 * rules), its cache (the remembered sandbox probe), Deno's cache (compiled code) and Deno itself.
 * The sandbox never lets the model write them, even when the workspace holds them or is one of
 * them. Absolute paths only.
 */
export function deftControlPlaces(): ControlPlace[] {
  const places: { path: string | undefined; what: string }[] = [
    { path: deftConfigDir(), what: "Deft's config folder (hooks, MCP servers, trusted folders)" },
    { path: deftStateDir(), what: "Deft's state folder (sessions, checkpoints, approvals)" },
    { path: deftCacheDir(), what: "Deft's cache folder" },
    { path: denoDir(), what: "Deno's cache folder (the compiled code Deft runs)" },
  ];
  try {
    places.push({ path: Deno.execPath(), what: "Deno itself" });
  } catch { /* not allowed to ask: Deno's own folder is then not known */ }
  return places.filter((p): p is ControlPlace => p.path !== undefined && p.path.startsWith("/"));
}

/** The paths of `deftControlPlaces`. */
export function deftControlPaths(): string[] {
  return deftControlPlaces().map((p) => p.path);
}
