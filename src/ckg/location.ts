/**
 * Where a workspace's graph database lives: outside the repository, in the user's cache folder,
 * one file per workspace named after a hash of the workspace's real path.
 */
import { basename, join } from "node:path";
import { readEnv } from "../env.ts";

/**
 * The folder holding graph databases: `ckgDir` when given, else `$DEFT_CACHE_DIR/ckg`, else
 * `$XDG_CACHE_HOME/deft/ckg`, else `~/.cache/deft/ckg`, else `<temp>/deft-cache/ckg` — always
 * inside the cache folder the tool host lets tools write.
 */
export function graphDirectory(ckgDir?: string): string {
  if (ckgDir) return ckgDir;
  const deftCache = readEnv("DEFT_CACHE_DIR");
  if (deftCache) return join(deftCache, "ckg");
  const xdg = readEnv("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "deft", "ckg");
  const home = readEnv("HOME") ?? readEnv("USERPROFILE");
  if (home) return join(home, ".cache", "deft", "ckg");
  return join(readEnv("TMPDIR") ?? readEnv("TEMP") ?? "/tmp", "deft-cache", "ckg");
}

/** The database file for the workspace whose real path is `workspace`. */
export function graphDatabasePath(workspace: string, ckgDir?: string): string {
  const digest = pathDigest(workspace);
  const label = basename(workspace).replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 40) || "root";
  return join(graphDirectory(ckgDir), `${label}-${digest}.db`);
}

/**
 * 16 hex digits naming a workspace: two 32-bit FNV-1a hashes of its path (different offsets).
 * A name, not a secret; cheap to compute without loading a crypto module at start-up.
 */
function pathDigest(path: string): string {
  const bytes = new TextEncoder().encode(path);
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (const byte of bytes) {
    a = Math.imul(a ^ byte, 0x01000193) >>> 0;
    b = Math.imul(b ^ byte, 0x01000193) >>> 0;
    b = (b ^ (b >>> 13)) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}
