/**
 * The tool worker's private temp folder: one per tool host, mode 0700, removed when the host
 * closes (and, failing that, when Deft exits). The worker may write there and not in the rest of
 * the system temp folder, where other users' and programs' files live.
 *
 * A Deft that was killed (SIGKILL, a power cut) removes nothing, so each folder's name carries its
 * owner: `deft-session-<pid namespace>.<pid>-XXXX`. Creating a folder sweeps the siblings whose
 * owner is gone — same pid namespace, no such process — and leaves anything else alone: another
 * namespace's folders (its pids mean nothing here), a name without an owner, a link or a file.
 */
import { granted } from "./grants.ts";

/** A created private folder, and how to remove it. */
export interface SessionTemp {
  path: string;
  remove(): void;
}

/**
 * Creates `deft-session-XXXX` (0700) in the first of `parents` Deft may write, creating that
 * parent if needed; undefined when it may write none of them.
 */
export function createSessionTemp(
  parents: readonly (string | undefined)[],
): SessionTemp | undefined {
  for (const parent of parents) {
    if (!parent || !granted({ name: "write", path: parent })) continue;
    let path: string;
    try {
      Deno.mkdirSync(parent, { recursive: true });
      path = Deno.makeTempDirSync({ dir: parent, prefix: `${PREFIX}${owner() ?? ""}-` });
      Deno.chmodSync(path, 0o700);
    } catch {
      continue;
    }
    sweepOrphans(parent);
    const onUnload = () => removeQuietly(path);
    globalThis.addEventListener("unload", onUnload);
    return {
      path,
      remove() {
        globalThis.removeEventListener("unload", onUnload);
        removeQuietly(path);
      },
    };
  }
  return undefined;
}

const PREFIX = "deft-session-";

/** `<pid namespace>.<pid>` of this process, or undefined where /proc does not say. */
function owner(): string | undefined {
  const ns = pidNamespace();
  return ns === undefined ? undefined : `${ns}.${Deno.pid}`;
}

function pidNamespace(): string | undefined {
  // Never a permission prompt: without read access to /proc, folders carry no owner and no sweep.
  if (!granted({ name: "read", path: "/proc" })) return undefined;
  try {
    // "pid:[4026531836]"
    return /^pid:\[(\d+)\]$/.exec(Deno.readLinkSync("/proc/self/ns/pid"))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Removes the session folders in `parent` left by a Deft of this pid namespace that no longer runs.
 * Only real directories owned by this user are removed; removal does not follow links inside.
 */
export function sweepOrphans(parent: string): string[] {
  const ns = pidNamespace();
  if (ns === undefined) return [];
  const swept: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(parent)];
  } catch {
    return swept;
  }
  const uid = Deno.uid();
  for (const entry of entries) {
    const match = /^deft-session-(\d+)\.(\d+)-/.exec(entry.name);
    if (!match || match[1] !== ns || !entry.isDirectory) continue;
    const pid = Number(match[2]);
    if (pid === Deno.pid || alive(pid)) continue;
    const path = `${parent}/${entry.name}`;
    try {
      const info = Deno.lstatSync(path);
      if (!info.isDirectory || (uid !== null && info.uid !== uid)) continue;
      Deno.removeSync(path, { recursive: true });
      swept.push(path);
    } catch { /* gone meanwhile, or not ours to remove */ }
  }
  return swept;
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (e) {
    // Only a definite "no such process" counts as gone.
    return !(e instanceof Deno.errors.NotFound);
  }
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* already gone, or not ours to remove any more */ }
}
