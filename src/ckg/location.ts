/**
 * Where a workspace's graph database lives: outside the repository, in the user's cache folder,
 * one file per workspace named after a hash of the workspace's real path.
 */
import { createHash } from "node:crypto";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    // Without env permission, fall through to the next choice.
    return undefined;
  }
}

/**
 * The folder holding graph databases: `ckgDir` when given, else `$DEFT_CACHE_DIR/ckg`, else
 * `$XDG_CACHE_HOME/deft/ckg`, else `~/.cache/deft/ckg`, else `<temp>/deft-cache/ckg` — always
 * inside the cache folder the tool host lets tools write.
 */
export function graphDirectory(ckgDir?: string): string {
  if (ckgDir) return ckgDir;
  const deftCache = env("DEFT_CACHE_DIR");
  if (deftCache) return join(deftCache, "ckg");
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "deft", "ckg");
  const home = env("HOME") ?? env("USERPROFILE");
  if (home) return join(home, ".cache", "deft", "ckg");
  let temp = "/tmp";
  try {
    temp = tmpdir();
  } catch { /* no env permission: the usual place */ }
  return join(temp, "deft-cache", "ckg");
}

/** The database file for the workspace whose real path is `workspace`. */
export function graphDatabasePath(workspace: string, ckgDir?: string): string {
  const digest = createHash("sha256").update(workspace).digest("hex").slice(0, 16);
  const label = basename(workspace).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 40) || "root";
  return join(graphDirectory(ckgDir), `${label}-${digest}.db`);
}
