/**
 * The patch of a container's workspace, computed inside it (`--patch-path` with a container): the
 * same steps as on the host (src/agent/patch.ts) — at the start the workspace's state (tracked and
 * untracked files) written as a tree into a private index and object store, at the end a private
 * index brought up to the work tree and `git diff --cached --binary` against that tree — with git
 * hardened the same way (policy/git.ts), run through `exec`. The repository's own index, objects
 * and refs are never written; the private folders live in Deft's folder inside (INSIDE_TEMP).
 */
import { INDEX_PATCH_ARGS, privateStoreEnv, runGitInContainer } from "../policy/git.ts";
import { containerExecLaunch, runChild } from "../policy/process.ts";
import type { Container } from "./container.ts";
import { INSIDE_TEMP } from "./inside.ts";

/** The container workspace's state at the start: a tree in a private store inside. */
export interface ContainerBaseline {
  /** The tree object's id. */
  tree: string;
  /** The private folder inside: `objects/` and `index`. */
  store: string;
}

type Git = (
  args: string[],
  env?: Record<string, string>,
  stdin?: Uint8Array,
) => ReturnType<typeof runGitInContainer>;

/**
 * Records the state of the container's workspace (tracked and untracked, not ignored, minus
 * `dropping` paths) as a tree in a private store inside; undefined when it is not a repository.
 * The store goes with the container (or stays in its INSIDE_TEMP when the container is kept).
 */
export async function containerBaseline(
  container: Container,
  dropping: (path: string) => boolean,
): Promise<ContainerBaseline | undefined> {
  const git = gitIn(container);
  if (!(await git(["rev-parse", "--show-toplevel"])).ok) return undefined;
  const store = await scratchDir(container, "baseline");
  const env = privateStoreEnv(`${store}/index`, `${store}/objects`, [await objectsOf(git)]);
  const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
  await must(git(hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env), "read-tree");
  await stageWorkTree(git, env, dropping);
  const tree = (await must(git(["write-tree"], env), "write-tree")).out.trim();
  return { tree, store };
}

/**
 * The workspace's patch against `baseline` (else HEAD), new files included; "" when it is not a
 * repository. `dropping` names the new files that are a run's leftovers (bytecode, caches), left
 * out as on the host (src/agent/droppings.ts).
 */
export async function containerPatch(
  container: Container,
  dropping: (path: string) => boolean,
  baseline?: ContainerBaseline,
): Promise<string> {
  const git = gitIn(container);
  if (!(await git(["rev-parse", "--show-toplevel"])).ok) return "";
  const scratch = await scratchDir(container, "patch");
  try {
    const repoObjects = await objectsOf(git);
    const env = privateStoreEnv(
      `${scratch}/index`,
      `${scratch}/objects`,
      baseline ? [repoObjects, `${baseline.store}/objects`] : [repoObjects],
    );
    let against: string | undefined;
    if (baseline) {
      // `cp -p` keeps the index's time: git tells a file changed within the same second by it.
      await inside(container, ["cp", "-p", "--", `${baseline.store}/index`, `${scratch}/index`]);
      against = baseline.tree;
    } else {
      const hasHead = (await git(["rev-parse", "--verify", "-q", "HEAD"], env)).ok;
      await must(git(hasHead ? ["read-tree", "HEAD"] : ["read-tree", "--empty"], env), "read-tree");
      against = hasHead ? "HEAD" : undefined;
    }
    await stageWorkTree(git, env, dropping);
    const diff = await must(git([...INDEX_PATCH_ARGS, ...(against ? [against] : [])], env), "diff");
    return diff.out;
  } finally {
    await runChild(
      containerExecLaunch(container.cli, container.id, { argv: ["rm", "-rf", "--", scratch] }),
    ).catch(() => {});
  }
}

/** True when the container's workspace is inside a git repository. */
export async function isContainerRepo(container: Container): Promise<boolean> {
  return (await gitIn(container)(["rev-parse", "--show-toplevel"])).ok;
}

function gitIn({ cli, id, workspace }: Container): Git {
  return (args, env = {}, stdin) => runGitInContainer(cli, id, workspace, args, env, stdin);
}

async function must(
  running: ReturnType<Git>,
  what: string,
): Promise<Awaited<ReturnType<Git>>> {
  const result = await running;
  if (!result.ok) throw new Error(`git ${what} failed: ${result.err.trim()}`);
  return result;
}

async function objectsOf(git: Git): Promise<string> {
  const objects = await must(
    git(["rev-parse", "--path-format=absolute", "--git-path", "objects"]),
    "rev-parse",
  );
  return objects.out.trim();
}

/** Runs `argv` inside; throws with its error output when it fails. */
async function inside(container: Container, argv: string[]): Promise<string> {
  const out = await runChild(containerExecLaunch(container.cli, container.id, { argv }));
  if (!out.success) {
    throw new Error(
      `${argv[0]} failed in the container: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return new TextDecoder().decode(out.stdout).trim();
}

/** A new private folder in Deft's folder inside, with an empty `objects/` in it. */
async function scratchDir(container: Container, kind: string): Promise<string> {
  const scratch = await inside(container, ["mktemp", "-d", `${INSIDE_TEMP}/${kind}.XXXXXX`]);
  if (!scratch.startsWith(`${INSIDE_TEMP}/`)) {
    throw new Error(`could not make a scratch folder in the container (mktemp said ${scratch})`);
  }
  await inside(container, ["mkdir", "--", `${scratch}/objects`]);
  return scratch;
}

/** Brings the private index up to the work tree: changed and deleted files, then new ones. */
async function stageWorkTree(
  git: Git,
  env: Record<string, string>,
  dropping: (path: string) => boolean,
): Promise<void> {
  await must(git(["add", "-u", "."], env), "add");
  const listed = await must(
    git(["ls-files", "-z", "--others", "--exclude-standard", "--", "."], env),
    "ls-files",
  );
  const fresh = listed.out.split("\0").filter((p) => p !== "" && !dropping(p));
  if (fresh.length === 0) return;
  // The list goes in on stdin: no file, and no path on a command line.
  await must(
    git(
      ["add", "--pathspec-from-file=-", "--pathspec-file-nul", "--"],
      env,
      new TextEncoder().encode(fresh.map((f) => `${f}\0`).join("")),
    ),
    "add",
  );
}
