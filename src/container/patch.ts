/**
 * The patch of a container's workspace, computed inside it (`--patch-path` with a container): the
 * same steps as on the host (src/agent/patch.ts `workspacePatch`) — a private index and object
 * store seeded from HEAD, tracked changes and new files added there, `git diff --cached
 * --binary` — with git hardened the same way (policy/git.ts), run through `exec`. The repository's
 * own index and objects are never written.
 */
import { INDEX_PATCH_ARGS, runGitInContainer } from "../policy/git.ts";
import { containerExecLaunch, runChild } from "../policy/process.ts";
import type { Container } from "./container.ts";
import { INSIDE_TEMP } from "./inside.ts";

/**
 * The workspace's patch against HEAD (new files included), "" when it is not a repository.
 * `dropping` names the new files that are a run's leftovers (bytecode, caches), left out as on the
 * host (src/agent/droppings.ts).
 */
export async function containerPatch(
  container: Container,
  dropping: (path: string) => boolean,
): Promise<string> {
  const { cli, id, workspace } = container;
  const git = (args: string[], env: Record<string, string> = {}, stdin?: Uint8Array) =>
    runGitInContainer(cli, id, workspace, args, env, stdin);
  const top = await git(["rev-parse", "--show-toplevel"]);
  if (!top.ok) return "";
  const made = await runChild(
    containerExecLaunch(cli, id, { argv: ["mktemp", "-d", `${INSIDE_TEMP}/patch.XXXXXX`] }),
  );
  const scratch = new TextDecoder().decode(made.stdout).trim();
  if (!made.success || !scratch.startsWith(`${INSIDE_TEMP}/`)) {
    throw new Error(
      `could not make a scratch folder in the container: ${new TextDecoder().decode(made.stderr)}`,
    );
  }
  try {
    const store = await runChild(
      containerExecLaunch(cli, id, { argv: ["mkdir", "--", `${scratch}/objects`] }),
    );
    if (!store.success) throw new Error(`could not make ${scratch}/objects in the container`);
    const objects = await git(["rev-parse", "--path-format=absolute", "--git-path", "objects"]);
    if (!objects.ok) throw new Error(`git rev-parse failed: ${objects.err.trim()}`);
    const env = {
      GIT_INDEX_FILE: `${scratch}/index`,
      GIT_OBJECT_DIRECTORY: `${scratch}/objects`,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: objects.out.trim(),
    };
    const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
    const read = await git(hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env);
    if (!read.ok) throw new Error(`git read-tree failed: ${read.err.trim()}`);
    const updated = await git(["add", "-u", "."], env);
    if (!updated.ok) throw new Error(`git add failed: ${updated.err.trim()}`);
    const listed = await git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], env);
    if (!listed.ok) throw new Error(`git ls-files failed: ${listed.err.trim()}`);
    const fresh = listed.out.split("\0").filter((p) => p !== "" && !dropping(p));
    if (fresh.length > 0) {
      // The list goes in on stdin: no file, and no path on a command line.
      const added = await git(
        ["add", "--pathspec-from-file=-", "--pathspec-file-nul", "--"],
        env,
        new TextEncoder().encode(fresh.map((f) => `${f}\0`).join("")),
      );
      if (!added.ok) throw new Error(`git add failed: ${added.err.trim()}`);
    }
    const diff = await git([...INDEX_PATCH_ARGS, ...(hasHead ? ["HEAD"] : [])], env);
    if (!diff.ok) throw new Error(`git diff failed: ${diff.err.trim()}`);
    return diff.out;
  } finally {
    await runChild(containerExecLaunch(cli, id, { argv: ["rm", "-rf", "--", scratch] }))
      .catch(() => {});
  }
}

/** True when the container's workspace is inside a git repository. */
export async function isContainerRepo(container: Container): Promise<boolean> {
  const { cli, id, workspace } = container;
  return (await runGitInContainer(cli, id, workspace, ["rev-parse", "--show-toplevel"])).ok;
}
