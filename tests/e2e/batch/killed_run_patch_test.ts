/**
 * A task whose `deft run` dies before writing its patch (killed, crashed), on the host: the batch
 * computes the patch of what the agent edited from the task's checkout; when it cannot (the
 * checkout is no repository any more), the result says `patch: "none"` and predictions.jsonl has
 * no line for the task, never an empty `model_patch` that would claim the run changed nothing.
 * (The same in a container: container_promises_test.ts.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import { makeRepo, processesWith, scriptedTrajectory } from "../../helpers/batch_fixture.ts";

const SLEEP = 7355;

/** The fixture's fix, then a long command the run is killed in. */
function fixThenHang(): Record<string, unknown> {
  const fix = scriptedTrajectory("fix");
  const hang = scriptedTrajectory("hang", SLEEP - 7000);
  const steps = fix.llm_interactions as unknown[];
  const done = steps.pop();
  return { ...fix, llm_interactions: [...steps, ...(hang.llm_interactions as unknown[]), done] };
}

Deno.test({
  name: "batch: a run killed before its patch: the patch of the edit, or none and no prediction",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using dir = await tempDir("deft-batch-killed-");
  await Deno.writeTextFile(join(dir.path, "hang.json"), JSON.stringify(fixThenHang()));
  const lines = [];
  for (const [n, id] of ["rescued", "lost"].entries()) {
    const commit = await makeRepo(join(dir.path, "repos", id), n);
    lines.push({ id, repo: `repos/${id}`, commit, task: "Fix add.", replay: "hang.json" });
  }
  const tasksFile = join(dir.path, "tasks.jsonl");
  await Deno.writeTextFile(tasksFile, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const out = join(dir.path, "out");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      "batch",
      tasksFile,
      "--out",
      out,
      "--concurrency",
      "2",
    ],
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), HOME: dir.path },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  try {
    const deadline = Date.now() + 120_000;
    while (processesWith(`sleep ${SLEEP}`).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(processesWith(`sleep ${SLEEP}`).length >= 2, "both runs reached their command");
    const runOf = (id: string) => processesWith(`--patch-path ${join(out, id, "patch.diff")}`);
    const [rescued] = runOf("rescued");
    const [lost] = runOf("lost");
    assert.ok(rescued && lost, "each task's deft run is found");
    // Both edited calc.py; one checkout then stops being a repository while its run is frozen.
    assert.match(await Deno.readTextFile(join(out, "lost", "workspace", "calc.py")), /a \+ b/);
    Deno.kill(lost, "SIGSTOP");
    await Deno.remove(join(out, "lost", "workspace", ".git"), { recursive: true });
    Deno.kill(lost, "SIGKILL");
    Deno.kill(rescued, "SIGKILL");
  } finally {
    const ended = await output;
    assert.equal(ended.code, 1, new TextDecoder().decode(ended.stderr));
  }

  const result = (id: string) =>
    JSON.parse(Deno.readTextFileSync(join(out, id, "result.json"))) as Record<string, unknown>;
  assert.equal(result("rescued").status, "error");
  assert.equal(result("rescued").patch, "recovered");
  const patch = await Deno.readTextFile(join(out, "rescued", "patch.diff"));
  assert.ok(patch.includes("\n-    return a - b\n+    return a + b\n"), patch);
  assert.equal(result("lost").status, "error");
  assert.equal(result("lost").patch, "none");
  assert.equal(
    await Deno.stat(join(out, "lost", "patch.diff")).then(() => true, () => false),
    false,
  );
  const predictions = (await Deno.readTextFile(join(out, "predictions.jsonl"))).trimEnd()
    .split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(predictions.map((p) => p.instance_id), ["rescued"]);
  assert.equal(predictions[0].model_patch, patch);
  assert.deepEqual(processesWith(`sleep ${SLEEP}`), []);
});
