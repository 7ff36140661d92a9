/**
 * Children's worktrees of one repository come and go at the same time: one child ending (its
 * worktree removed, `git worktree prune`) while others are being added must not break the adds.
 */
import assert from "node:assert/strict";
import { openChildTree } from "../../../src/agent/subagent_tree.ts";
import { git, makeBuggyRepo } from "../../helpers/repo.ts";

Deno.test("a child ending while two others start: every worktree is made, none is left", async () => {
  const repo = await makeBuggyRepo();
  const sandbox = { mode: "none" as const, workspace: repo };
  const failures: string[] = [];
  // Each round loses the prune/add race on this machine about one time in ten without the turns.
  for (let round = 0; round < 30; round++) {
    const ending = await openChildTree(repo, sandbox);
    const results = await Promise.allSettled([
      ending.remove().then(() => undefined),
      openChildTree(repo, sandbox),
      openChildTree(repo, sandbox),
    ]);
    for (const r of results) {
      if (r.status === "rejected") failures.push(`round ${round}: ${r.reason}`);
      else if (r.value) await r.value.remove();
    }
  }
  assert.deepEqual(failures, []);
  assert.deepEqual((await git(repo, "worktree", "list")).split("\n").length, 1);
});
