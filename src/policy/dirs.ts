/**
 * Deft's own directories outside any workspace: its cache, its state, the user's config, and its
 * temporary files.
 */

import { readEnv as env } from "../env.ts";

/**
 * Deft's own folders are refused when someone else could have made or could change them: a link,
 * not a folder, not the user's, or writable by group or others. With `HOME` unset these folders
 * once fell under the shared `/tmp` (`/tmp/.local/state/deft`), where another local user could
 * make them first and then read or plant sessions, approvals and hooks.
 */
export class DeftDirError extends Error {
  override name = "DeftDirError";
}

/** An absolute path from the variable, else undefined (XDG: a relative value is ignored). */
function absoluteEnv(name: string): string | undefined {
  const value = env(name);
  return value?.startsWith("/") ? value : undefined;
}

/** The user's home folder: `$HOME` when it is an absolute path, else not known. */
function home(): string | undefined {
  return absoluteEnv("HOME");
}

let knownUid: number | undefined;

/**
 * The user's id; without `--allow-sys`, the owner of a file Deft makes for a moment in `probe`
 * (the temp folder unless told); null when neither can be had (or there is no such id).
 */
function uid(probe = tempRoot()): number | null {
  if (knownUid !== undefined) return knownUid;
  let id: number | null = null;
  try {
    id = Deno.uid();
  } catch {
    try {
      const file = Deno.makeTempFileSync({ dir: probe, prefix: ".deft-uid-" });
      try {
        id = Deno.lstatSync(file).uid;
      } finally {
        Deno.removeSync(file);
      }
    } catch { /* not allowed to write there either */ }
  }
  if (id !== null) knownUid = id;
  return id;
}

/**
 * With no home known (`HOME` unset, empty or relative, or not readable without `--allow-env`),
 * Deft's state or cache: a folder of the user's own in the temp folder, `deft-state-UID`, as tmux
 * keeps its sockets. Unchecked: `privateTempFolder` makes it.
 */
function tempFolderPath(kind: "state" | "cache"): string {
  return `${tempRoot()}/deft-${kind}-${uid() ?? "user"}`;
}

/**
 * `tempFolderPath`, made now when missing with mode 0700: in a shared temp folder another user
 * could make it first, and then `ownFolder` refuses it; once it is the user's, nobody else can
 * rename it (the temp folder is sticky) nor look inside.
 */
function privateTempFolder(kind: "state" | "cache"): string {
  const path = tempFolderPath(kind);
  try {
    Deno.mkdirSync(path, { mode: 0o700 });
  } catch { /* there already (judged next), or not Deft's to make (no write permission) */ }
  return path;
}

/**
 * `path` as it is, if it is missing or a folder only the user can change; else a `DeftDirError`
 * saying what is wrong and what to do. When Deft cannot learn who it runs as (no `--allow-sys`,
 * nowhere it may write), the owner is not judged for a folder the user named (under `HOME`, or by
 * a variable), and such a folder in the temp folder is refused (`inTemp`): anyone may make that.
 */
function ownFolder(path: string, what: string, inTemp = false): string {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return path; // missing (or not to be looked at): made by Deft when it first writes there
  }
  return judged(path, info, what, inTemp);
}

/**
 * `ownFolder` for one of Deft's folders, made now when missing with mode 0700 (and its missing
 * parents): left to the writes that need it, it would get the umask's mode, group-writable under
 * a umask of 002, and be refused on the next run.
 */
function ownMadeFolder(path: string, what: string): string {
  try {
    Deno.lstatSync(path);
  } catch {
    try {
      Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch { /* not Deft's to make here (no permission): judged as it is */ }
  }
  return ownFolder(path, what);
}

function judged(path: string, info: Deno.FileInfo, what: string, inTemp: boolean): string {
  // Without --allow-sys or a writable temp folder, a file made in the folder itself says who
  // Deft runs as: a folder of someone else's, which the user may not write, gives no answer.
  const me = uid() ?? (info.isDirectory ? uid(path) : null);
  const wrong = info.isSymlink
    ? "is a link"
    : !info.isDirectory
    ? "is not a folder"
    : info.uid !== null && me === null && inTemp
    ? "is not one Deft can tell is yours (it may not write in it, nor ask your user id: " +
      "allow it --allow-sys)"
    : info.uid !== null && me !== null && info.uid !== me
    ? `belongs to another user (uid ${info.uid})`
    : info.mode !== null && (info.mode & 0o022) !== 0
    ? `is writable by ${(info.mode & 0o002) ? "other users" : "its group"}`
    : undefined;
  if (!wrong) return path;
  throw new DeftDirError(
    `${what} ${path} ${wrong}: someone else could read or change what Deft keeps there. ` +
      `Remove it or make it a folder of yours alone (chmod 700), or point Deft elsewhere ` +
      `(HOME, or the XDG_* or DEFT_CACHE_DIR variable for it).`,
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
 * `$DEFT_CACHE_DIR`, else `$XDG_CACHE_HOME/deft`, else `~/.cache/deft`, else (no home known) the
 * user's own `deft-cache-UID` in the temp folder. Refused when it is not the user's alone
 * (`DeftDirError`).
 */
export function deftCacheDir(): string {
  const named = cachePath();
  return named
    ? ownMadeFolder(named, "Deft's cache folder")
    : ownFolder(privateTempFolder("cache"), "Deft's cache folder", true);
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
  return path && ownMadeFolder(path, "Deft's config folder");
}

/** `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`, unchecked. */
function statePath(): string | undefined {
  const base = absoluteEnv("XDG_STATE_HOME") ?? (home() && `${home()}/.local/state`);
  return base ? `${base}/deft` : undefined;
}

/**
 * Deft's state folder: `$XDG_STATE_HOME/deft`, else `~/.local/state/deft`, else (no home known)
 * the user's own `deft-state-UID` in the temp folder, never a folder of the temp folder's that
 * anyone could make. Refused when it is not the user's alone (`DeftDirError`).
 */
export function deftStateDir(): string {
  const named = statePath();
  return named
    ? ownMadeFolder(named, "Deft's state folder")
    : ownFolder(privateTempFolder("state"), "Deft's state folder", true);
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
    {
      path: statePath() ?? tempFolderPath("state"),
      what: "Deft's state folder (sessions, checkpoints, approvals)",
    },
    {
      path: cachePath() ?? tempFolderPath("cache"),
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
