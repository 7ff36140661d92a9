/**
 * The workspace repository's own run-on-the-host files: `.git/hooks` (the user's next
 * `git commit` runs them) and `.git/config` (any `git status` an editor runs on the workspace
 * starts its `core.fsmonitor`, `core.pager`, `diff.external`). A writable sandbox shows them
 * read-only, through the same cover as the other protected places (./control_cover.ts).
 *
 * Unlike those, they are covered at their own paths, not at the entry below the workspace: the
 * rest of `.git` stays writable so that the model's `git add`, `commit`, `checkout -b` and `stash`
 * work. So that the model cannot move the repository away and make a new one beside the covers,
 * the git folder itself is bound again at its own path (`repoPins`): a mount point cannot be
 * renamed or removed.
 */
import type { ControlPlace } from "./dirs.ts";
import { isBelow } from "./mount_view.ts";
import { dirname, join, relative, resolve } from "./paths.ts";

/** A protected place of the workspace's repository: covered at its own path. */
export interface RepoPlace extends ControlPlace {
  kind: "repo";
  /** For a folder: the mode it is made with when missing (a file is made with `missing`). */
  folderMode?: number;
}

/** What a repository place is, for the refusal's wording. */
const HOOKS_WHAT = "the repository's hooks folder (your next git commit on the host runs them)";
const CONFIG_WHAT =
  "the repository's config (git on the host, and any editor's git status, runs the programs it names)";
const LINK_WHAT =
  "the workspace's .git file (it says which folder git takes hooks and config from)";

/** The most bytes of a `.git` file or `commondir` file read: they hold one path. */
const MAX_POINTER = 4096;

/**
 * The repository places of `workspace` that a writable sandbox covers: the workspace's own
 * `.git/hooks` and `.git/config`. When `.git` is a file (a linked worktree, a submodule), the
 * file itself, and the hooks and config of the folder it names only where that folder, read
 * without following links out, lies inside the workspace (else the sandbox shows it read-only
 * anyway). No `.git`, nothing. A place that is a link is still listed: the cover refuses it.
 */
export function repoPlaces(workspace: string): RepoPlace[] {
  const ws = resolve(workspace);
  const dotGit = join(ws, ".git");
  const info = lstat(dotGit);
  if (!info) return [];
  if (info.isDirectory) return gitDirPlaces(dotGit);
  if (info.isSymlink) {
    // A link the model could swap; where it leads outside, nothing there is writable.
    const real = realPath(dotGit);
    return real && isBelow(realPath(ws) ?? ws, real)
      ? [{ kind: "repo", path: dotGit, what: LINK_WHAT }]
      : [];
  }
  if (!info.isFile) return [];
  const places: RepoPlace[] = [{ kind: "repo", path: dotGit, what: LINK_WHAT }];
  const gitDir = pointedDir(dotGit, /^gitdir:\s*(.+)$/m, ws);
  if (!gitDir) return places;
  const common = pointedDir(join(gitDir, "commondir"), /^(.+)$/m, ws) ??
    (lstat(join(gitDir, "commondir")) ? undefined : gitDir);
  return common ? [...places, ...gitDirPlaces(common)] : places;
}

/**
 * The git folders to bind again at their own paths, writable, so that the model cannot rename
 * them (the workspace's `.git` folder): the folders holding the places of `repoPlaces`.
 */
export function repoPins(places: readonly RepoPlace[]): string[] {
  const pins = new Set<string>();
  for (const place of places) {
    if (place.what === LINK_WHAT) continue;
    const dir = dirname(resolve(place.path));
    if (lstat(dir)?.isDirectory) pins.add(dir);
  }
  return [...pins];
}

/**
 * The repository place `path` is or lies in, judged by its name alone (`…/.git/config`,
 * `…/.git/hooks/…`): for the refusal of a write the sandbox failed as read-only.
 */
export function repoPlaceOf(path: string): RepoPlace | undefined {
  const p = resolve(path);
  const hooks = /^(.*\/\.git\/hooks)(\/.*)?$/.exec(p);
  if (hooks) return { kind: "repo", path: hooks[1], what: HOOKS_WHAT };
  if (/\/\.git\/config$/.test(p)) return { kind: "repo", path: p, what: CONFIG_WHAT };
  return undefined;
}

function gitDirPlaces(dir: string): RepoPlace[] {
  return [
    { kind: "repo", path: join(dir, "hooks"), what: HOOKS_WHAT, folderMode: 0o755 },
    { kind: "repo", path: join(dir, "config"), what: CONFIG_WHAT, missing: "" },
  ];
}

/**
 * The folder a pointer file (`.git`'s `gitdir:`, a `commondir`) names, when it is a real folder
 * inside `ws` (links resolved; a link out of the workspace leads nowhere Deft covers).
 */
function pointedDir(file: string, line: RegExp, ws: string): string | undefined {
  const info = lstat(file);
  if (!info?.isFile || info.size > MAX_POINTER) return undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return undefined;
  }
  const named = line.exec(text)?.[1]?.trim();
  if (!named) return undefined;
  const real = realPath(resolve(dirname(file), named));
  if (!real || !lstat(real)?.isDirectory) return undefined;
  // Shown at the workspace's path as the sandbox binds it, even where that path has a link.
  const wsReal = realPath(ws) ?? ws;
  return isBelow(wsReal, real) ? join(ws, relative(wsReal, real)) : undefined;
}

function lstat(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

function realPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch {
    return undefined;
  }
}
