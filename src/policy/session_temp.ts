/**
 * The tool worker's private temp folder: one per tool host, mode 0700, removed when the host
 * closes (and, failing that, when Deft exits). The worker may write there and not in the rest of
 * the system temp folder, where other users' and programs' files live.
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
      path = Deno.makeTempDirSync({ dir: parent, prefix: "deft-session-" });
      Deno.chmodSync(path, 0o700);
    } catch {
      continue;
    }
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

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* already gone, or not ours to remove any more */ }
}
