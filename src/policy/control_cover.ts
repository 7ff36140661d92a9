/**
 * The cover for Deft's control folders (its config, state and cache, Deno's cache, Deno itself)
 * and the user's start-up files (./home_places.ts): what the model must never write, because the
 * next Deft, shell, git or ssh acts on it on the host.
 */
import type { SandboxMode } from "./sandbox_modes.ts";
import { isReadOnly } from "./read_only.ts";
import { type ControlPlace, deftControlPlaces } from "./dirs.ts";
import { homePlaces } from "./home_places.ts";
import { type RepoPlace, repoPlaceOf, repoPlaces } from "./repo_places.ts";
import { shownByWorkspace } from "./bwrap_args.ts";
import { isBelow } from "./mount_view.ts";
import { SandboxUnavailableError } from "./sandbox_options.ts";
import { dirname, join, relative, resolve } from "./paths.ts";
import { readEnv } from "../env.ts";

/**
 * The entries right below a writable workspace that hold the protected places
 * (`deftControlPlaces`: the user's config with its hooks and trusted folders, Deft's state and
 * cache, Deno's compiled code and Deno itself; `homePlaces`: the shell's start-up files, ~/.ssh,
 * git's user config), to show read-only on top of the workspace: with `-w ~`, the model must not
 * write what the next Deft, login or git runs on the host. The entry below the
 * workspace is covered, not the path itself: inside the workspace the model could rename a folder
 * on the way (a mount moves with it) and make a new one where Deft looks next; a mount point cannot
 * be renamed or replaced. A missing entry is made first (a folder 0700; a start-up file 0600, as
 * `homePlaces` says) so that it can be covered; an entry
 * that is a link cannot be (the model could swap the link), and the sandbox is refused with what
 * to do. A workspace that is a control folder, or lies inside one, is refused too (see
 * `controlFolderHolding`). Each place counts at its path as written and at its real path.
 */
export function controlEntries(
  workspace: string,
  places: readonly ControlPlace[] = protectedPlaces(),
): string[] {
  const ws = resolve(workspace);
  const all = withRealPaths(places);
  const holder = controlFolderHolding(ws, all);
  if (holder) throw insideControl(ws, holder);
  const entries = new Map<string, ControlPlace>();
  for (const place of all) {
    const p = resolve(place.path);
    // A path under a folder the sandbox makes private (its /tmp) is out of the model's reach.
    if (!shownByWorkspace(ws, p)) continue;
    const rest = p.slice(ws === "/" ? 1 : ws.length + 1);
    const entry = join(ws, rest.split("/")[0]);
    const linked = strayLink(p, entry);
    if (linked) {
      throw controlRefusal(
        ws,
        linked,
        place,
        "it has another hard link outside what Deft covers, through which the model could write it",
      );
    }
    // A file is made as a file only where it is the entry itself; any other entry is a folder.
    const made = entry === p ? place : { ...place, missing: undefined };
    const known = entries.get(entry);
    if (!known || (known.missing !== undefined && made.missing === undefined)) {
      entries.set(entry, made);
    }
  }
  for (const [entry, place] of entries) coverable(ws, entry, place);
  return [...entries.keys(), ...repoEntries(ws)];
}

/**
 * The workspace repository's places (`repoPlaces`), each covered at its own path (the rest of
 * `.git` stays the model's to write), made first where missing and refused where it is a link or
 * has a hard link elsewhere, like the entries above.
 */
function repoEntries(ws: string): string[] {
  const paths: string[] = [];
  for (const place of repoPlaces(ws)) {
    const p = resolve(place.path);
    if (!shownByWorkspace(ws, p)) continue;
    if (strayLink(p, p)) {
      throw controlRefusal(
        ws,
        p,
        place,
        "it has another hard link, through which the model could write it",
      );
    }
    coverable(ws, p, place);
    paths.push(p);
  }
  return paths;
}

/** The places no writable sandbox lets the model write: Deft's control places and `homePlaces`. */
export function protectedPlaces(): ControlPlace[] {
  return [...deftControlPlaces(), ...homePlaces()];
}

/**
 * Makes sure `entry` can be covered: it exists (a missing folder made 0700, a missing file made
 * 0600 with `place.missing`), and it is not a link the model could swap.
 */
function coverable(ws: string, entry: string, place: ControlPlace | RepoPlace): void {
  let info: Deno.FileInfo | undefined;
  try {
    info = Deno.lstatSync(entry);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw controlRefusal(ws, entry, place, String(e));
  }
  if (info?.isSymlink) throw controlRefusal(ws, entry, place, "it is a link");
  if (info) return;
  try {
    if (place.missing === undefined) {
      Deno.mkdirSync(entry, { mode: "folderMode" in place ? place.folderMode : 0o700 });
    } else Deno.writeTextFileSync(entry, place.missing, { createNew: true, mode: 0o600 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) {
      throw controlRefusal(ws, entry, place, `it cannot be made (${e})`);
    }
    if (Deno.lstatSync(entry).isSymlink) throw controlRefusal(ws, entry, place, "it is a link");
  }
}

/** Entries of a folder looked at for hard links, at most (~/.ssh holds a handful). */
const MAX_LINK_LOOKS = 256;
/** Entries looked at, at most, to find a file's other names inside its covered entry. */
const MAX_NAME_LOOKS = 20_000;

/**
 * `path`, or a file right inside it when it is a folder, when that is a regular file with a name
 * outside `entry` (the folder or file below the workspace that is shown read-only over it): the
 * cover shows the names inside `entry` read-only, and the model would write the file through
 * another name in the workspace (a `~/.bashrc` hard-linked from `~/dotfiles/bashrc`). Names
 * inside `entry` are covered too (npm installs Deno under two names in its package folder): they
 * are looked for from the file's folder outwards, up to `entry`, within a bound; a file whose
 * every name is not found counts as having one outside.
 */
function strayLink(path: string, entry: string): string | undefined {
  const many = (p: string): Deno.FileInfo | undefined => {
    try {
      const info = Deno.lstatSync(p);
      return info.isFile && (info.nlink ?? 1) > 1 ? info : undefined;
    } catch {
      return undefined;
    }
  };
  const stray = (p: string, info: Deno.FileInfo) => !allNamesWithin(p, info, entry);
  const own = many(path);
  if (own) return stray(path, own) ? path : undefined;
  let looked = 0;
  try {
    for (const item of Deno.readDirSync(path)) {
      if (++looked > MAX_LINK_LOOKS) break;
      const file = join(path, item.name);
      const info = item.isFile ? many(file) : undefined;
      if (info && stray(file, info)) return file;
    }
  } catch {
    // Not a folder, or not there: nothing more to look at.
  }
  return undefined;
}

/**
 * Whether all `info.nlink` names of the file at `path` lie inside `entry`: the folders from the
 * file's own outwards to `entry` are walked (links not followed, each folder once) until every
 * name is found or `MAX_NAME_LOOKS` entries were looked at.
 */
function allNamesWithin(path: string, info: Deno.FileInfo, entry: string): boolean {
  const want = info.nlink ?? 1;
  if (path === entry || info.ino === null || info.dev === null) return want <= 1;
  const names = new Set<string>([path]);
  const walked = new Set<string>();
  let looks = 0;
  const walk = (dir: string): boolean => {
    const stack = [dir];
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (walked.has(d)) continue;
      walked.add(d);
      let items: Deno.DirEntry[];
      try {
        items = [...Deno.readDirSync(d)];
      } catch {
        continue;
      }
      for (const item of items) {
        if (++looks > MAX_NAME_LOOKS) return false;
        const p = join(d, item.name);
        if (item.isDirectory) stack.push(p);
        else if (item.isFile) {
          try {
            const other = Deno.lstatSync(p);
            if (other.ino === info.ino && other.dev === info.dev) names.add(p);
          } catch {
            // Gone meanwhile: not a name.
          }
          if (names.size >= want) return true;
        }
      }
    }
    return names.size >= want;
  };
  for (let dir = dirname(path); isBelow(entry, dir); dir = dirname(dir)) {
    if (walk(dir)) return true;
    if (dir === entry || looks > MAX_NAME_LOOKS) break;
  }
  return false;
}

/**
 * The control place that is the workspace or holds it, if any. Nothing in such a workspace could
 * be left writable: every file there is one Deft acts on (or will, under a name the model picks:
 * a new config file, a session to resume, a compiled module), so no set of covered entries would
 * do, and a whole workspace shown read-only would fail every edit of the task half-way. A
 * writable sandbox there is refused before the session starts (see `checkControlWorkspace`).
 */
export function controlFolderHolding(
  workspace: string,
  places: readonly ControlPlace[] = withRealPaths(protectedPlaces()),
): ControlPlace | undefined {
  const ws = resolve(workspace);
  return places.find((place) => isBelow(resolve(place.path), ws));
}

/**
 * Throws `SandboxUnavailableError` when a sandbox in `mode` would let the model write the
 * workspace and the workspace is, or lies inside, one of Deft's control folders. For the start
 * of a session, so the refusal comes before the task, not at its first command.
 */
export function checkControlWorkspace(workspace: string, mode: SandboxMode): void {
  if (mode === "none" || isReadOnly({ sandbox: mode })) return;
  const holder = controlFolderHolding(workspace);
  if (holder) throw insideControl(resolve(workspace), holder);
}

/** Each place, and again at its real path where that differs (a `~/.config` linked elsewhere). */
function withRealPaths(places: readonly ControlPlace[]): ControlPlace[] {
  const all = [...places];
  for (const place of places) {
    const real = realPathOf(resolve(place.path));
    if (real && real !== resolve(place.path)) all.push({ ...place, path: real });
  }
  return all;
}

/** `path` with its longest existing part resolved; undefined where Deno may not look. */
function realPathOf(path: string): string | undefined {
  for (let dir = path;; dir = dirname(dir)) {
    try {
      const real = Deno.realPathSync(dir);
      return dir === path ? real : join(real, relative(dir, path));
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound) || dir === "/") return undefined;
    }
  }
}

function insideControl(workspace: string, holder: ControlPlace): SandboxUnavailableError {
  const where = resolve(holder.path) === workspace ? "is" : `lies inside ${holder.path},`;
  return new SandboxUnavailableError(
    `The workspace ${workspace} ${where} ${holder.what}: what the host runs next is ` +
      `kept there, so the model may not write in it. Look at it with --sandbox read-only, change ` +
      `it yourself, or work on a copy in another folder and copy back what you checked.`,
  );
}

function controlRefusal(
  workspace: string,
  entry: string,
  place: ControlPlace,
  why: string,
): SandboxUnavailableError {
  const holds = resolve(place.path) === entry ? "" : `, holding ${place.path}`;
  return new SandboxUnavailableError(
    `The workspace ${workspace} holds ${entry} (${place.what}${holds}), where Deft or your ` +
      `shell finds what it runs next, and the sandbox cannot keep the model from changing it: ` +
      `${why}. ` +
      `Use a narrower workspace (-w DIR), or --sandbox read-only.`,
  );
}

/**
 * True when a folder Deft writes for itself (the code graph's) is writable through the workspace's
 * own bind: shown by the workspace and not under an entry `controlEntries` covers read-only.
 */
export function writableThroughWorkspace(workspace: string, path: string): boolean {
  if (!shownByWorkspace(workspace, path) || controlFolderHolding(workspace)) return false;
  const p = resolve(path);
  return !controlEntries(workspace).some((entry) => p === entry || isBelow(entry, p));
}

/**
 * Why a write to `path` failed with "read-only file system" when the path is, lies in, or lies
 * beside one of the protected places under the entry the sandbox covers; undefined when no
 * protected place explains it. `shown` is the path as the caller named it. The one wording of
 * that refusal: which path, that Deft keeps it read-only and why, and what the user can do.
 */
export function protectedWriteRefusal(path: string, shown: string = path): string | undefined {
  const p = resolve(path);
  const home = homeOf();
  const deft = new Set(withRealPaths(deftControlPlaces()).map((place) => resolve(place.path)));
  const places = withRealPaths(protectedPlaces());
  const tilde = (at: string) =>
    home && isBelow(home, at) && at !== home ? `~${at.slice(home.length)}` : at;
  const held = places.find((place) => isBelow(resolve(place.path), p));
  const repo = held ? undefined : repoPlaceOf(p);
  if (repo) return repoRefusal(p, shown, repo);
  let where: string;
  let place: ControlPlace;
  let kept: string;
  if (held) {
    place = held;
    const at = resolve(held.path);
    kept = at === p ? "it" : tilde(at);
    where = at === p ? `is ${held.what}` : `lies in ${kept}, ${held.what}`;
  } else {
    // The cover is the entry right below the workspace: the nearest folder holding a place.
    let entry: string | undefined;
    let inside: ControlPlace | undefined;
    for (let dir = dirname(p); !inside && dir !== "/" && dir !== home; dir = dirname(dir)) {
      inside = places.find((candidate) => isBelow(dir, resolve(candidate.path)));
      entry = dir;
    }
    if (!inside || !entry) return undefined;
    place = inside;
    kept = tilde(entry);
    where = `lies in ${kept}, which holds ${tilde(resolve(inside.path))}, ${inside.what}`;
  }
  const next = deft.has(resolve(place.path))
    ? "what the next Deft runs is kept there"
    : "your next login, shell, git or ssh acts on it";
  return `${shown} ${where}. Deft keeps ${kept} read-only to the model when the workspace holds ` +
    `it, because ${next} (docs/sandbox.md, "What Deft runs next stays out of reach"). Nothing ` +
    `was written. Make this change yourself outside Deft if it is wanted, or give the task a ` +
    `narrower workspace (-w DIR) that does not hold it.`;
}

/** The refusal of a write to the workspace repository's hooks or config (`repoPlaceOf`). */
function repoRefusal(p: string, shown: string, place: RepoPlace): string {
  const at = resolve(place.path);
  const where = at === p ? `is ${place.what}` : `lies in ${at}, ${place.what}`;
  return `${shown} ${where}. Deft keeps the workspace repository's .git/hooks and .git/config ` +
    `read-only to the model, because git on the host runs what they name (docs/sandbox.md, ` +
    `"What Deft runs next stays out of reach"). Nothing was written. Make this change yourself ` +
    `outside Deft if it is wanted; for one git command use \`git -c name=value\`.`;
}

function homeOf(): string | undefined {
  const home = readEnv("HOME")?.replace(/\/+$/, "");
  return home && home.startsWith("/") ? home : undefined;
}
