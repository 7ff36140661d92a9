/**
 * Names of the editors' own scratch files: `.deft-<12 hex>.tmp` for the new content of an atomic
 * write; `.deft-<12 hex>.bak` holds the old content of a hard-linked file that an older Deft was
 * rewriting in place when it was killed (Deft now refuses to edit such files), kept for the user.
 */

/** Matches a scratch file name; group 1 is its kind (`tmp` or `bak`). */
export const TEMP_NAME_PATTERN = /^\.deft-[0-9a-f]{12}\.(tmp|bak)$/;

/** Scratch `.tmp` files older than this are left-overs of a crash and are removed. */
export const STALE_TEMP_MS = 60_000;

/** A fresh scratch file name of `kind`. */
export function tempName(kind: "tmp" | "bak"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `.deft-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}.${kind}`;
}

/**
 * Removes `.tmp` scratch files older than `STALE_TEMP_MS` from `dir` (a prefix such as `""` for
 * the current directory or `/repo/src/`). `.bak` files are kept: after a crash they hold the only
 * whole copy of a file that was being rewritten in place.
 */
export function removeStaleTemps(dir: string, now = Date.now()): number {
  let removed = 0;
  for (const entry of Deno.readDirSync(dir === "" ? "." : dir)) {
    const match = TEMP_NAME_PATTERN.exec(entry.name);
    if (!match || match[1] !== "tmp" || !entry.isFile) continue;
    try {
      const info = Deno.lstatSync(dir + entry.name);
      if (info.mtime && now - info.mtime.getTime() > STALE_TEMP_MS) {
        Deno.removeSync(dir + entry.name);
        removed++;
      }
    } catch {
      // Gone already, or not ours to remove: either way nothing to do.
    }
  }
  return removed;
}
