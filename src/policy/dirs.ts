/**
 * Deft's own directories outside any workspace: its cache, its state, the user's config, and its
 * temporary files.
 */

import { readEnv as env } from "../env.ts";

/**
 * Deft's own folders are refused when someone else could have made or could change them: a link,
 * not a folder, not the user's, or writable by group or others. With `HOME` unset these folders
 * once fell under the shared `/tmp`, where another local user could make them first and then read
 * or plant sessions, approvals and hooks.
 */
export class DeftDirError extends Error {
  override name = "DeftDirError";
}

/** An absolute path from the variable, else undefined (XDG: a relative value is ignored). */
function absoluteEnv(name: string): string | undefined {
  const value = env(name);
  return value?.startsWith("/") ? value : undefined;
}

/** The user's id, or null where it may not be asked (no `--allow-sys`) or there is none. */
function uid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}

/** Deft's cache with no home known: a folder of this user's own in the temp folder. */
function tempCachePath(): string {
  return `${tempRoot()}/deft-cache-${uid() ?? "user"}`;
}

/** The user's home folder: `$HOME` when it is an absolute path, else not known. */
function home(): string | undefined {
  return absoluteEnv("HOME");
}

/**
 * `path` as it is, if it is missing or a folder only the user can change; else a `DeftDirError`
 * saying what is wrong and what to do.
 */
function ownFolder(path: string, what: string): string {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return path; // missing (or not to be looked at): made by Deft when it first writes there
  }
  const wrong = info.isSymlink
    ? "is a link"
    : !info.isDirectory
    ? "is not a folder"
    : info.uid !== null && uid() !== null && info.uid !== uid()
    ? `belongs to another user (uid ${info.uid})`
    : info.mode !== null && (info.mode & 0o022) !== 0
    ? `is writable by ${(info.mode & 0o002) ? "other users" : "its group"}`
    : undefined;
  if (!wrong) return path;
  throw new DeftDirError(
    `${what} ${path} ${wrong}: someone else could read or change what Deft keeps there. ` +
      `Remove it or make it a folder of yours alone (chmod 700), or point Deft elsewhere.`,
  );
}

/** `$DEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/deft`, else `~/.cache/deft`, unchecked. */
function cachePath(): string | undefined {
  const explicit = env("DEFT_CACHE_DIR");
  if (explicit) return explicit;
  const base = absoluteEnv("XDG_CACHE_HOME") ?? (home() && `${home()}/.cache`);
  return base ? `${base}/deft` : undefined;
}

/**
 * `$DEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/deft`, else `~/.cache/deft`, else (no home) a folder of
 * this user's in the temp folder. Refused when it is not the user's alone (`DeftDirError`).
 */
export function deftCacheDir(): string {
  return ownFolder(
    cachePath() ?? tempCachePath(),
    "Deft's cache folder",
  );
}

/** The system's temporary directory. */
export function tempRoot(): string {
  return env("TMPDIR") ?? env("TMP") ?? env("TEMP") ?? "/tmp";
}

/** `$XDG_CONFIG_HOME/deft`, else `~/.config/deft`, unchecked. */
function configPath(): string | undefined {
  const base = absoluteEnv("XDG_CONFIG_HOME") ?? (home() && `${home()}/.config`);
  return base ? `${base}/deft` : undefined;
}

/**
 * The user's config folder for Deft: `$XDG_CONFIG_HOME/deft`, else `~/.config/deft`; none when
 * neither is known. Refused when it is not the user's alone (`DeftDirError`).
 */
export function deftConfigDir(): string | undefined {
  const path = configPath();
  return path && ownFolder(path, "Deft's config folder");
}

/** `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`, unchecked. */
function statePath(): string | undefined {
  const base = absoluteEnv("XDG_STATE_HOME") ?? (home() && `${home()}/.local/state`);
  return base ? `${base}/deft` : undefined;
}

/**
 * Deft's state folder: `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`. With neither known
 * (`HOME` unset, empty or relative) there is no safe place for sessions and approvals, and a
 * `DeftDirError` says what to set; also refused when it is not the user's alone.
 */
export function deftStateDir(): string {
  const path = statePath();
  if (!path) {
    throw new DeftDirError(
      "Deft's state folder (sessions, checkpoints, approvals) is not known: HOME is unset or not " +
        "an absolute path. Set HOME to your home folder, or XDG_STATE_HOME to a folder of yours.",
    );
  }
  return ownFolder(path, "Deft's state folder");
}

/**
 * Where Deno keeps its caches (compiled modules, npm packages): `$DENO_DIR`, else Deno's default
 * (`~/Library/Caches/deno` on macOS, `$XDG_CACHE_HOME/deno` or `~/.cache/deno` elsewhere).
 */
export function denoDir(): string | undefined {
  const explicit = env("DENO_DIR");
  if (explicit) return explicit;
  const caches = Deno.build.os === "darwin"
    ? home() && `${home()}/Library/Caches`
    : env("XDG_CACHE_HOME") ?? (home() ? `${home()}/.cache` : undefined);
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
  // Unchecked: a folder refused for its owner or mode is still covered, never opened to the model.
  const places: { path: string | undefined; what: string }[] = [
    { path: configPath(), what: "Deft's config folder (hooks, MCP servers, trusted folders)" },
    { path: statePath(), what: "Deft's state folder (sessions, checkpoints, approvals)" },
    {
      path: cachePath() ?? tempCachePath(),
      what: "Deft's cache folder",
    },
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
