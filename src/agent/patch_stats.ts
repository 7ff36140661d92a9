/** Lines added and removed per file of a patch, read by `git apply --numstat` (no repo needed). */

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
  const child = new Deno.Command("git", {
    args: ["apply", "--numstat", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    env: { GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(patch));
  await writer.close();
  const out = await child.output();
  if (!out.success) return [];
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
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
