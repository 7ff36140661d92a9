/**
 * The temporary files of atomic writes: how they are named, and how the ones a killed write left
 * behind are found and removed.
 *
 * A name is `.deft-tmp-<random>-<start of the target's name>`, cut to fit the file system's
 * 255-byte limit whatever the target's length, so a valid target name never fails for its
 * temporary's sake. The writer holds an exclusive lock on its temporary file while it works; a
 * write that was killed releases it with its process, so a temporary nobody has locked (and that
 * is not brand new) is left over and can go.
 */
import { join } from "node:path";

/** Every temporary file of an atomic write starts with this. */
export const TEMP_PREFIX = ".deft-tmp-";

/** Git pathspecs that leave temporary files (current and earlier names) out of a patch. */
export const TEMP_PATHSPEC_EXCLUDES: readonly string[] = [
  `:(exclude,glob)**/${TEMP_PREFIX}*`,
  ":(exclude,glob)**/.*.deft-*.tmp",
];

const NAME_LIMIT_BYTES = 255;
/** A temporary younger than this may belong to a write that has not locked it yet. */
const GRACE_MS = 1_000;
// Names of temporaries written by earlier versions: `.<name>.deft-<8 hex>.tmp`.
const OLD_NAME = /^\..*\.deft-[0-9a-f]{8}\.tmp$/;

/**
 * A fresh temporary name for a file named `base`, at most 255 bytes of UTF-8.
 * @example tempName("a.txt") // ".deft-tmp-1f3a9c0b-a.txt"
 */
export function tempName(base: string): string {
  const head = `${TEMP_PREFIX}${crypto.randomUUID().slice(0, 8)}-`;
  return head + utf8Prefix(base, NAME_LIMIT_BYTES - head.length);
}

/** True when `name` is the name of a temporary file of an atomic write. */
export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) || OLD_NAME.test(name);
}

const swept = new Set<string>();

/**
 * Removes the temporaries a killed write left in `dir`: once per folder for the life of this
 * module (a restarted tool host sweeps again). Never throws; what cannot be checked is left.
 */
export async function sweepStaleTemps(dir: string): Promise<void> {
  if (swept.has(dir)) return;
  swept.add(dir);
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isFile && isTempName(entry.name)) await removeIfStale(join(dir, entry.name));
    }
  } catch {
    // An unreadable folder keeps its leftovers; the write itself reports real problems.
  }
}

async function removeIfStale(path: string): Promise<void> {
  let file: Deno.FsFile | undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile || Date.now() - (info.mtime?.getTime() ?? 0) < GRACE_MS) return;
    file = await Deno.open(path, { read: true });
    if (!await file.tryLock(true)) return; // A live write holds it.
    await Deno.remove(path);
  } catch {
    // Gone already, or not ours to judge.
  } finally {
    file?.close();
  }
}

// The longest start of `text` that fits in `limit` bytes of UTF-8, never splitting a character.
function utf8Prefix(text: string, limit: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = new TextEncoder().encode(char).length;
    if (bytes + size > limit) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}
