/**
 * A tracked file grown to a 4 GB sparse file (issue 48, finding 11): git would hash every byte
 * of it for the turn's checkpoint, the baseline and the patch, and the run took minutes to end.
 * Now the file is left out of each and each says so: the patch in its first line (and the run on
 * the console), the checkpoint in its record, the rewind in what it could not restore.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const GB4 = 4 * 1024 * 1024 * 1024;

Deno.test("a tracked file grown to a 4 GB sparse file: the run ends soon, and each record says it was left out", async () => {
  const repo = await tempDirUntilExit("deft-sparse-repo-");
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  await Deno.writeTextFile(`${repo}/calc.py`, "def add(a, b):\n    return a - b\n");
  await Deno.writeTextFile(`${repo}/disk.img`, "small\n");
  await git(repo, "init", "-q");
  await git(repo, "add", ".");
  await git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "truncate -s 4G disk.img && sed -i 's/a - b/a + b/' calc.py",
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const started = Date.now();
    const run = await runDeft(
      [
        "run",
        "grow it",
        "-w",
        repo,
        "--patch-path",
        `${h}/p.diff`,
        ...mockModelArgs(mock),
      ],
      { cwd: h, env },
    );
    const took = Date.now() - started;
    assert.equal(run.code, 0, run.stderr);
    assert.equal((await Deno.stat(`${repo}/disk.img`)).size, GB4, "the model grew the file");
    // Before: minutes (git hashed and compressed 4 GB for the checkpoint and for the patch).
    assert.ok(took < 60_000, `the run took ${took} ms:\n${run.stderr}`);

    const patch = await Deno.readTextFile(`${h}/p.diff`);
    assert.match(patch.split("\n")[0], /^# Deft left "disk\.img" out of this patch: .*256 MiB/);
    assert.match(patch, /^\+ {4}return a \+ b$/m);
    assert.doesNotMatch(patch, /^diff --git a\/disk\.img/m);
    assert.match(run.stderr, /warning: Deft left "disk\.img" out of this patch/);
    // The patch still applies to a clean checkout.
    const clean = await tempDirUntilExit("deft-sparse-clone-");
    await git(clean, "clone", "-q", repo, ".");
    await git(clean, "apply", "--check", `${h}/p.diff`);

    const listed = await runDeft(["checkpoints", "-w", repo, "--json"], { cwd: h, env });
    assert.equal(listed.code, 0, listed.stderr);
    const { checkpoints } = JSON.parse(listed.stdout);
    const turn1 = checkpoints.find((c: Json) => c.turn === 1);
    assert.deepEqual(turn1.left_out, ["disk.img"]);

    const back = await runDeft(["rewind", "-w", repo, "--to", "0"], { cwd: h, env });
    assert.equal(back.code, 0, back.stderr);
    assert.match(back.stderr, /not restored, left as it is .*above 256 MiB.*"disk\.img"/);
    assert.equal(await Deno.readTextFile(`${repo}/calc.py`), "def add(a, b):\n    return a - b\n");
    assert.equal((await Deno.stat(`${repo}/disk.img`)).size, GB4);
  } finally {
    await mock.close();
  }
});
