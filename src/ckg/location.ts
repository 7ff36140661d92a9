/**
 * Where a workspace's graph database lives: outside the repository, in the user's cache folder,
 * one file per workspace named after a hash of the workspace's real path.
 */
import { basename, join } from "node:path";
import { deftCacheDir } from "../policy/dirs.ts";

/**
 * The folder holding graph databases: `ckgDir` when given, else `ckg` in Deft's cache folder
 * (policy/dirs.ts: `$DEFT_CACHE_DIR`, `$XDG_CACHE_HOME/deft`, `~/.cache/deft`, or the user's own
 * folder in the temp folder; refused when it is not the user's alone) — always inside the cache
 * folder the tool host lets tools write.
 */
export function graphDirectory(ckgDir?: string): string {
  return ckgDir ?? join(deftCacheDir(), "ckg");
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
