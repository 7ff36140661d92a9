/** Lines added and removed per file of a patch, read by `git apply --numstat` (no repo needed). */
import { runGit } from "../policy/git.ts";

/** One file of a patch. */
export interface FileChange {
  path: string;
  added: number;
  removed: number;
  binary: boolean;
}

/** The files `patch` changes, with their +/− line counts (empty for an empty patch). */
export async function patchStats(patch: string): Promise<FileChange[]> {
  if (patch.trim() === "") return [];
  // Hardened like every git Deft runs, and outside any repository: `apply --numstat` needs none.
  const out = await runGit("/", ["apply", "--numstat", "-"], {
    stdin: new TextEncoder().encode(patch),
  }).catch(() => undefined);
  if (!out?.ok) return [];
  return out.out.split("\n").flatMap((line) => {
    const [added, removed, ...path] = line.split("\t");
    if (path.length === 0) return [];
    const binary = added === "-";
    return [{
      path: path.join("\t"),
      added: binary ? 0 : Number(added),
      removed: binary ? 0 : Number(removed),
      binary,
    }];
  });
}
