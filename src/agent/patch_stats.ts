/** Lines added and removed per file of a patch, read by `git apply --numstat` (no repo needed). */
import { gitInvocation } from "../policy/git.ts";

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
  // Hardened like every git Deft runs: it starts in the user's folder, maybe a hostile repository.
  const { program, args, env } = gitInvocation(["apply", "--numstat", "-"], {
    GIT_CONFIG_GLOBAL: "/dev/null",
  });
  const child = new Deno.Command(program, {
    args,
    env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
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
