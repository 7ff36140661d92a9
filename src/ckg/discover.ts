/**
 * Which files belong to the graph. Inside a git work tree, the files git would track: tracked and
 * untracked-but-not-ignored (`git ls-files -co --exclude-standard`), so .gitignore is respected.
 * Elsewhere, a walk that skips hidden files and folders, dependency folders, build output and
 * virtualenvs.
 * Symlinked folders are never followed (no loops, no escaping the workspace). Git runs hardened
 * (policy/git.ts), so a planted `core.fsmonitor` never runs.
 */
import { dirname, join } from "node:path";
import { isSourcePath } from "./languages.ts";
import type { GitResult } from "../policy/git.ts";

/** Folder names that hold dependencies or build output rather than a project's own code. */
const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  "node_modules",
  "bower_components",
  "jspm_packages",
  "__pycache__",
  "dist",
  "build",
  "out",
  "target",
  "vendor",
  "coverage",
]);

/** A folder's listing as kept: what the walk needs of each entry. */
export interface Listing {
  mtimeMs: number;
  entries: Deno.DirEntry[];
}

/**
 * Folder listings remembered by folder mtime: creating, deleting or renaming an entry changes its
 * folder's mtime, so an unchanged mtime means an unchanged listing and the walk can skip the read.
 * The graph keeps them in its database too (`changed`, `load`), so a one-shot search on an
 * unchanged tree reuses the file list the database holds: a stat per folder, no folder read.
 */
export class ListingCache {
  readonly #entries = new Map<string, Listing>();
  /** Folders listed anew (or found unsettled) since the last `changed`. */
  readonly #changed = new Set<string>();
  /** Folders read from disk (not answered from the cache), for reports. */
  reads = 0;

  /** The entries of `dir`, read again only when its mtime moved (or is too recent to trust). */
  list(dir: string): Deno.DirEntry[] {
    const mtimeMs = Deno.statSync(dir).mtime?.getTime() ?? 0;
    const cached = this.#entries.get(dir);
    if (cached && cached.mtimeMs === mtimeMs) return cached.entries;
    this.reads++;
    // Only what a walk looks at: folders, source files and links, a virtualenv's marker.
    const entries = [...Deno.readDirSync(dir)].filter((e) =>
      e.isDirectory || e.name === "pyvenv.cfg" || isSourcePath(e.name)
    ).map(({ name, isFile, isDirectory, isSymlink }) => ({
      name,
      isFile,
      isDirectory,
      isSymlink,
    }));
    this.#changed.add(dir);
    // Two changes within one mtime tick would look like one: only trust settled mtimes.
    if (Date.now() - mtimeMs > RECENT_MS) this.#entries.set(dir, { mtimeMs, entries });
    else this.#entries.delete(dir);
    return entries;
  }

  /** Adds listings kept elsewhere (the database), unless this cache already has them. */
  load(listings: Iterable<[string, Listing]>): void {
    for (const [dir, listing] of listings) {
      if (!this.#entries.has(dir)) this.#entries.set(dir, listing);
    }
  }

  /** The folders listed anew since the last call: their listing to keep, or undefined to drop. */
  changed(): [string, Listing | undefined][] {
    const out: [string, Listing | undefined][] = [...this.#changed].map((dir) => [
      dir,
      this.#entries.get(dir),
    ]);
    this.#changed.clear();
    return out;
  }
}

const RECENT_MS = 2000;

/** The source files under a scope, as paths relative to the workspace root. */
export interface Discovery {
  files: string[];
  /** How the files were listed. */
  mode: "git" | "walk";
  /** Folders that could not be listed, and why git could not be used, if it could not. */
  problems: { path: string; error: string }[];
  /** Folders the walk left out by policy (dependencies, build output, virtualenvs), and why. */
  skippedDirs: { path: string; reason: string }[];
  /** Folders the walk read (the others' listings came from the cache). */
  foldersRead: number;
}

/** Why a folder of this name is left out. */
function dirReason(name: string): string {
  return DEPENDENCY_DIRS.has(name) ? "dependencies" : "build output";
}

const DEPENDENCY_DIRS: ReadonlySet<string> = new Set([
  "node_modules",
  "bower_components",
  "jspm_packages",
  "vendor",
]);

/**
 * Lists the source files under `root/scope` (`scope` relative to `root`, "" for all of it).
 * Paths in the result are relative to `root`, `/`-separated.
 */
export async function discoverSources(
  root: string,
  scope: string,
  cache?: ListingCache,
): Promise<Discovery> {
  const scopeAbs = scope === "" ? root : join(root, scope);
  const problems: Discovery["problems"] = [];
  if (insideGitWorkTree(scopeAbs)) {
    const listed = await gitListing(scopeAbs);
    if (Array.isArray(listed)) {
      const prefix = scope === "" ? "" : `${scope}/`;
      const files = listed.filter(isSourcePath).map((p) => prefix + p);
      return { files, mode: "git", problems, skippedDirs: [], foldersRead: 0 };
    }
    problems.push({ path: scope || ".", error: `git could not list files (${listed.error})` });
  }
  const files: string[] = [];
  const skippedDirs: Discovery["skippedDirs"] = [];
  const out = { files, problems, skippedDirs, foldersRead: 0 };
  const cachedReads = cache?.reads ?? 0;
  walk(scopeAbs, scope, out, true, cache);
  if (cache) out.foldersRead = cache.reads - cachedReads;
  return { ...out, mode: "walk" };
}

function insideGitWorkTree(dir: string): boolean {
  for (let d = dir;; d = dirname(d)) {
    try {
      Deno.statSync(join(d, ".git"));
      return true;
    } catch {
      // keep looking upwards
    }
    if (dirname(d) === d) return false;
  }
}

async function gitListing(dir: string): Promise<string[] | { error: string }> {
  let output: GitResult;
  try {
    // Loaded here, not up front: outside a work tree (and on a miss there) git is never run.
    const { runGit } = await import("../policy/git.ts");
    output = await runGit(dir, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]);
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  if (!output.ok) {
    const message = output.err.trim().split("\n")[0];
    return { error: message || `exit code ${output.code}` };
  }
  const text = output.out;
  // A deleted-but-unstaged file is still "cached": the stat that follows drops it.
  return [...new Set(text.split("\0").filter((p) => p !== ""))];
}

function walk(
  abs: string,
  rel: string,
  out: Omit<Discovery, "mode">,
  isScopeRoot: boolean,
  cache: ListingCache | undefined,
): void {
  const { files, problems } = out;
  let entries: Deno.DirEntry[];
  try {
    if (cache) entries = cache.list(abs);
    else {
      entries = [...Deno.readDirSync(abs)];
      out.foldersRead++;
    }
  } catch (e) {
    problems.push({ path: rel || ".", error: e instanceof Error ? e.message : String(e) });
    return;
  }
  // A folder holding pyvenv.cfg is a Python virtualenv: installed packages, not the project.
  if (!isScopeRoot && entries.some((e) => e.name === "pyvenv.cfg" && e.isFile)) {
    out.skippedDirs.push({ path: rel, reason: "a Python virtualenv" });
    return;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory) {
      if (SKIPPED_DIRS.has(entry.name)) {
        // __pycache__ holds no source: not worth a line in the report.
        if (entry.name !== "__pycache__") {
          out.skippedDirs.push({ path: childRel, reason: dirReason(entry.name) });
        }
        continue;
      }
      walk(`${abs}/${entry.name}`, childRel, out, false, cache);
    } else if ((entry.isFile || entry.isSymlink) && isSourcePath(entry.name)) {
      files.push(childRel);
    }
  }
}
