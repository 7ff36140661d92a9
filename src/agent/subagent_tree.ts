/**
 * A child agent's own git worktree of the parent's workspace (the `task` tool, ./subagent.ts):
 * created by Deft under its temp folder, never inside the workspace, detached at the parent's
 * HEAD, with the parent's uncommitted changes (tracked and new files, as the session's patch
 * sees them) applied on top, so the child starts from the tree the parent sees. No branch is
 * made. `remove` takes the worktree away and prunes git's record of it, also when the child has
 * already deleted its folder.
 *
 * Git runs through policy/git.ts (`runGit`: hardened, no hooks, the repository's drivers
 * blanked), outside the sandbox: `worktree add` writes the repository's `.git/worktrees/` and a
 * folder outside the workspace, which the sandbox keeps read-only; the arguments are Deft's own.
 */
import { basename, join } from "node:path";
import { type GitSandbox, runGit } from "../policy/git.ts";
import { tempRoot } from "../policy/dirs.ts";
import { patchChanges, workspacePatch } from "./patch.ts";

/** A worktree made for one child. */
export interface ChildTree {
  /** The child's workspace: the worktree, at the parent workspace's place in the repository. */
  workspace: string;
  /** The parent's repository's top folder, which the child's patch's paths start from. */
  top: string;
  /** What became of the parent's uncommitted changes, in one line (for the result). */
  carried: string;
  /** Removes the worktree and its folder (idempotent, never throws). */
  remove(): Promise<void>;
}

/**
 * The worktree changes of one repository, one after another: `git worktree prune` run by an
 * ending child deletes the admin folder of a worktree another child is adding at that moment
 * (git then fails with "failed to read .git/worktrees/…/commondir").
 */
const worktreeTurns = new Map<string, Promise<unknown>>();

function inTurn<T>(top: string, work: () => Promise<T>): Promise<T> {
  const before = worktreeTurns.get(top) ?? Promise.resolve();
  const mine = before.then(work, work);
  const settled = mine.catch(() => {});
  worktreeTurns.set(top, settled);
  settled.then(() => {
    if (worktreeTurns.get(top) === settled) worktreeTurns.delete(top);
  });
  return mine;
}

/** Makes the worktree for a child of the session in `parent` (a folder inside a git work tree). */
export async function openChildTree(parent: string, sandbox: GitSandbox): Promise<ChildTree> {
  const facts = await runGit(parent, ["rev-parse", "--show-toplevel", "--show-prefix"]);
  if (!facts.ok) {
    throw new Error(
      `${parent} is not inside a git repository, so a child cannot get its own worktree; ` +
        `use mode "read", or run \`git init && git add -A && git commit -m base\` first`,
    );
  }
  const [top, prefix = ""] = facts.out.split("\n");
  const head = await runGit(top, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (!head.ok) {
    throw new Error(
      `the repository at ${top} has no commit yet, so a child cannot get its own worktree; ` +
        `commit once first, or use mode "read"`,
    );
  }
  const folder = await Deno.realPath(
    await Deno.makeTempDir({ dir: tempRoot(), prefix: "deft-subagent-" }),
  );
  // git names the worktree's admin folder after the last path part: each child is named after its
  // own temp folder, so no two share `.git/worktrees/<name>`.
  const root = join(folder, basename(folder));
  let removed: Promise<void> | undefined;
  const remove = () =>
    removed ??= (async () => {
      await inTurn(top, async () => {
        await runGit(top, ["worktree", "remove", "--force", "--force", root]).catch(() => {});
        await Deno.remove(folder, { recursive: true }).catch(() => {});
        await runGit(top, ["worktree", "prune"]).catch(() => {});
      });
    })();
  try {
    const added = await inTurn(
      top,
      () => runGit(top, ["worktree", "add", "--detach", root, head.out.trim()]),
    );
    if (!added.ok) throw new Error(`git worktree add failed: ${added.err.trim()}`);
    const workspace = join(root, prefix.trim());
    return { workspace, top, carried: await carryChanges(parent, root, sandbox), remove };
  } catch (e) {
    await remove();
    throw e;
  }
}

/** Applies the parent's uncommitted changes in the worktree; says what it did. */
async function carryChanges(parent: string, root: string, sandbox: GitSandbox): Promise<string> {
  let patch: string;
  try {
    patch = await workspacePatch(parent, { sandbox });
  } catch (e) {
    return `started from HEAD: the uncommitted changes could not be read (${(e as Error).message})`;
  }
  if (!patchChanges(patch)) return "started from HEAD (no uncommitted changes)";
  const applied = await runGit(root, ["apply", "--whitespace=nowarn", "--binary", "-"], {
    stdin: new TextEncoder().encode(patch),
  });
  return applied.ok
    ? "started from HEAD with your uncommitted changes applied"
    : `started from HEAD: your uncommitted changes did not apply (${applied.err.trim()})`;
}
