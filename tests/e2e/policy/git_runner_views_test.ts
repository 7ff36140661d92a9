/**
 * A runner serves one sandbox view (src/policy/git_runner.ts): two views that differ only in a
 * read-only path never share a runner. If they did, a command of the narrower view would run with
 * the wider view's mounts (a folder meant read-only written), or the other way round. Real bwrap:
 * what each command may write is what its own view says.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runInRunner, type RunnerView } from "../../../src/policy/git_runner.ts";
import { tempDir } from "../../helpers/temp.ts";

/** Runs `script` in `view`'s runner; true when it exited 0. */
async function writes(view: RunnerView, script: string): Promise<boolean> {
  const answer = await runInRunner(view, [], {
    cwd: view.workspace,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    argv: ["sh", "-c", script],
    timeoutMs: 30_000,
    maxOut: 1 << 16,
    maxErr: 1 << 16,
  });
  return answer.code === 0;
}

Deno.test("git runner: views that differ only in a read-only path each get their own runner", async () => {
  await using tmp = await tempDir("deft-runner-views-");
  const workspace = await Deno.realPath(tmp.path);
  const kept = join(workspace, "kept");
  await Deno.mkdir(kept);
  const open: RunnerView = { mode: "workspace-write", workspace, readOnlyPaths: [] };
  const shut: RunnerView = { mode: "workspace-write", workspace, readOnlyPaths: [kept] };
  // The open view first: its runner starts, and may write the folder.
  assert.ok(await writes(open, "echo 1 > kept/a"), "the open view could not write kept/");
  // The same workspace with kept/ read-only: its commands may not write there.
  assert.equal(await writes(shut, "echo 2 > kept/b"), false, "the read-only view wrote kept/b");
  await assert.rejects(Deno.stat(join(kept, "b")), Deno.errors.NotFound);
  // And the open view is still open (it was not handed the read-only view's runner).
  assert.ok(await writes(open, "echo 3 > kept/c"), "the open view lost kept/");
  assert.equal(await Deno.readTextFile(join(kept, "c")), "3\n");
});

Deno.test("git runner: a read-only view started first does not narrow a view without that path", async () => {
  await using tmp = await tempDir("deft-runner-views-");
  const workspace = await Deno.realPath(tmp.path);
  const first = join(workspace, "first");
  const second = join(workspace, "second");
  await Deno.mkdir(first);
  await Deno.mkdir(second);
  const a: RunnerView = { mode: "workspace-write", workspace, readOnlyPaths: [first] };
  const b: RunnerView = { mode: "workspace-write", workspace, readOnlyPaths: [second] };
  assert.equal(await writes(a, "echo x > first/f"), false, "view a wrote its read-only folder");
  assert.ok(await writes(a, "echo x > second/f"), "view a could not write second/");
  assert.equal(await writes(b, "echo x > second/g"), false, "view b wrote its read-only folder");
  assert.ok(await writes(b, "echo x > first/g"), "view b could not write first/");
  await assert.rejects(Deno.stat(join(second, "g")), Deno.errors.NotFound);
  assert.equal(await Deno.readTextFile(join(first, "g")), "x\n");
});
