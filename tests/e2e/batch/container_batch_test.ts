/**
 * `deft batch` on SWE-bench dataset lines, against real Docker (a private daemon the test starts
 * and stops) and real Podman: `--image-template` names each instance's image (the cached test
 * image, tagged under the template's names), the batch starts each task's container, the replayed
 * run works on /testbed inside, the task's test runs inside after it, and predictions.jsonl comes
 * out in SWE-bench's format. No container is left behind, also after Ctrl-C. Containers are
 * found by the batch's own label (its output folder), so another test's containers on the same
 * Podman never count.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  fixAddCall,
  processesWith,
  recordedCall,
  recordedTrajectory,
} from "../../helpers/batch_fixture.ts";
import { type TestRuntime, testRuntime } from "../../helpers/containers.ts";

/** A recording on /testbed: `fix` repairs calc.py, `idle` changes nothing, `hang` sleeps. */
function trajectory(kind: "fix" | "idle" | "hang", sleep = 0) {
  const steps = [];
  if (kind === "fix") {
    steps.push(
      recordedCall("bash", { command: "cd /testbed && python3 test_calc.py; echo $?" }, 1),
      fixAddCall("/testbed", 2),
    );
  }
  if (kind === "hang") steps.push(recordedCall("bash", { command: `sleep ${sleep}` }, 1));
  return recordedTrajectory("Fix add.", "/testbed", steps);
}

/** A SWE-bench dataset line as the dataset has it, plus Deft's own `replay` and `test`. */
function datasetLine(instanceId: string, extra: Record<string, unknown>) {
  return {
    repo: "deft-test/calc",
    instance_id: instanceId,
    base_commit: "0123456789abcdef0123456789abcdef01234567",
    patch: "diff --git a/calc.py b/calc.py\n",
    test_patch: "",
    problem_statement: "add(2, 3) returns -1; it should return 5.",
    hints_text: "",
    created_at: "2024-01-01T00:00:00Z",
    version: "1.0",
    FAIL_TO_PASS: '["test_calc.py"]',
    PASS_TO_PASS: "[]",
    environment_setup_commit: "0123456789abcdef0123456789abcdef01234567",
    ...extra,
  };
}

/** Ids of the containers the batch writing to `out` started, running or not. */
async function batchContainers(rt: TestRuntime, out: string): Promise<string[]> {
  return (await rt.cli("ps", "-a", "-q", "--filter", `label=deft.batch=${out}`))
    .split("\n").filter(Boolean);
}

function jsonLines(path: string): Record<string, unknown>[] {
  return Deno.readTextFileSync(path).trimEnd().split("\n").map((l) => JSON.parse(l));
}

for (const runtime of ["docker", "podman"] as const) {
  Deno.test({
    name: `batch (${runtime}): SWE-bench lines with --image-template give predictions.jsonl`,
    sanitizeResources: false,
    sanitizeOps: false,
  }, async (t) => {
    await using rt = await testRuntime(runtime);
    await using dir = await tempDir("deft-swe-batch-");
    // Names only this run uses, so nothing of another test's or run's can count.
    const namespace = `deft-swe-${crypto.randomUUID().slice(0, 8)}`;
    const template = `${namespace}/sweb.eval.x86_64.{swebench_id}:latest`;
    const ids = ["deft-test__calc-1", "deft-test__calc-2", "deft-test__calc-3"];
    const tags: string[] = [];
    for (const id of ids.slice(0, 2)) {
      // SWE-bench's naming: lower case, `__` as `_1776_`.
      const tag = `${namespace}/sweb.eval.x86_64.${id.replace("__", "_1776_")}:latest`;
      await rt.cli("tag", rt.image, tag);
      tags.push(tag);
    }
    try {
      await Deno.writeTextFile(join(dir.path, "fix.json"), JSON.stringify(trajectory("fix")));
      await Deno.writeTextFile(join(dir.path, "idle.json"), JSON.stringify(trajectory("idle")));
      await Deno.writeTextFile(
        join(dir.path, "hang.json"),
        JSON.stringify(trajectory("hang", 7311)),
      );
      const test = "python3 test_calc.py";
      const lines = [
        datasetLine(ids[0], { replay: "fix.json", test }),
        datasetLine(ids[1], { replay: "idle.json", test }),
        // A line's own image wins over the template (which names no such image).
        datasetLine(ids[2], { replay: "fix.json", test, image: rt.image }),
      ];
      const tasksFile = join(dir.path, "swe.jsonl");
      await Deno.writeTextFile(tasksFile, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const env = { ...rt.env, HOME: dir.path };

      await t.step("three instances: predictions, per-task tests, no container left", async () => {
        const out = join(dir.path, "out");
        const run = await runDeft([
          "batch",
          tasksFile,
          "--out",
          out,
          "--image-template",
          template,
          "--container-runtime",
          runtime,
          "--model-name-or-path",
          "deft-scripted",
          "--concurrency",
          "2",
          "--output-format",
          "json",
        ], { env });
        assert.equal(run.code, 1, run.stderr);
        assert.deepEqual(JSON.parse(run.stdout).counts, { passed: 2, failed: 1 }, run.stderr);

        const predictions = jsonLines(join(out, "predictions.jsonl"));
        assert.equal(predictions.length, 3);
        assert.deepEqual(predictions.map((p) => p.instance_id).sort(), ids);
        for (const p of predictions) {
          // Exactly SWE-bench's prediction fields, each a string.
          assert.deepEqual(Object.keys(p).sort(), [
            "instance_id",
            "model_name_or_path",
            "model_patch",
          ]);
          for (const value of Object.values(p)) assert.equal(typeof value, "string");
          assert.equal(p.model_name_or_path, "deft-scripted");
        }
        const byId = new Map(predictions.map((p) => [p.instance_id, p.model_patch as string]));
        for (const id of [ids[0], ids[2]]) {
          assert.match(byId.get(id)!, /^diff --git a\/calc\.py b\/calc\.py\n/);
          assert.ok(byId.get(id)!.includes("\n-    return a - b\n+    return a + b\n"), id);
        }
        assert.equal(byId.get(ids[1]), "");

        const results = new Map(
          jsonLines(join(out, "results.jsonl")).map((r) => [r.id as string, r]),
        );
        assert.equal(results.get(ids[0])!.status, "passed");
        assert.equal(results.get(ids[0])!.test_exit_code, 0);
        assert.equal(results.get(ids[1])!.status, "failed");
        assert.equal(results.get(ids[1])!.test_exit_code, 1);
        assert.equal(results.get(ids[2])!.test_exit_code, 0);
        // The image each ran in; the dataset's repository and commit recorded, never cloned.
        assert.equal(results.get(ids[0])!.image, tags[0]);
        assert.equal(results.get(ids[2])!.image, rt.image);
        assert.equal(results.get(ids[0])!.repo, "deft-test/calc");
        assert.equal(results.get(ids[0])!.commit, lines[0].base_commit);
        for (const id of ids) {
          assert.equal(
            await Deno.stat(join(out, id, "workspace")).then(() => true, () => false),
            false,
          );
        }
        // The test ran inside, on the container's /testbed: its output is in the task's log.
        const log = await Deno.readTextFile(join(out, ids[1], "deft.log"));
        assert.match(log, /--- test: python3 test_calc.py\n[\s\S]*add\(2, 3\) should be 5/);
        // The trajectory names the container's workspace.
        const recorded = JSON.parse(await Deno.readTextFile(join(out, ids[0], "trajectory.json")));
        assert.equal(recorded.working_dir, "/testbed");
        assert.deepEqual(await batchContainers(rt, out), []);
        // The image is untouched: the fix lived in the task's container only.
        const fresh = await rt.cli(
          "run",
          "--rm",
          "--network",
          "none",
          rt.image,
          "cat",
          "/testbed/calc.py",
        );
        assert.match(fresh, /return a - b/);
      });

      await t.step(
        "Ctrl-C: the running task's container goes, and it has no prediction",
        async () => {
          const out = join(dir.path, "out-int");
          const hangFile = join(dir.path, "hang.jsonl");
          await Deno.writeTextFile(
            hangFile,
            JSON.stringify(datasetLine(ids[0], { replay: "hang.json", test: "true" })) + "\n",
          );
          const child = new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              ...deftFlags(),
              `${REPO_ROOT}main.ts`,
              "batch",
              hangFile,
              "--out",
              out,
              "--image-template",
              template,
              "--container-runtime",
              runtime,
            ],
            env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...env },
            stdin: "null",
            stdout: "piped",
            stderr: "piped",
          }).spawn();
          const output = child.output();
          // Until the task's command runs inside its container.
          const deadline = Date.now() + 90_000;
          let running = false;
          while (!running && Date.now() < deadline) {
            running = (await batchContainers(rt, out)).length === 1 &&
              processesWith("sleep 7311").length > 0;
            if (!running) await new Promise((r) => setTimeout(r, 300));
          }
          assert.ok(running, "the task's command never ran in a container");
          child.kill("SIGINT");
          const ended = await output;
          assert.equal(ended.code, 130, new TextDecoder().decode(ended.stderr));
          const result = JSON.parse(await Deno.readTextFile(join(out, ids[0], "result.json")));
          assert.equal(result.status, "interrupted");
          const predictions = await Deno.readTextFile(join(out, "predictions.jsonl")).catch(() =>
            ""
          );
          assert.equal(predictions, "");
          assert.deepEqual(await batchContainers(rt, out), []);
          assert.deepEqual(processesWith("sleep 7311"), []);
        },
      );

      await t.step(
        "a task past its time limit: its container goes, its prediction stays",
        async () => {
          const out = join(dir.path, "out-timeout");
          const hangFile = join(dir.path, "timeout.jsonl");
          await Deno.writeTextFile(
            hangFile,
            JSON.stringify(datasetLine(ids[0], { replay: "hang.json", test: "true", timeout: 4 })) +
              "\n",
          );
          const run = await runDeft([
            "batch",
            hangFile,
            "--out",
            out,
            "--image-template",
            template,
            "--container-runtime",
            runtime,
          ], { env });
          assert.equal(run.code, 1, run.stderr);
          const result = JSON.parse(await Deno.readTextFile(join(out, ids[0], "result.json")));
          assert.equal(result.status, "timeout");
          assert.equal(result.test_exit_code, null);
          // A timed-out task is finished: SWE-bench gets its (empty) patch.
          const [prediction] = jsonLines(join(out, "predictions.jsonl"));
          assert.equal(prediction.instance_id, ids[0]);
          assert.equal(prediction.model_patch, "");
          assert.deepEqual(await batchContainers(rt, out), []);
          assert.deepEqual(processesWith("sleep 7311"), []);
        },
      );

      await t.step(
        "a line naming a Dockerfile: the task runs in the image built from it, which then goes",
        async () => {
          const out = join(dir.path, "out-build");
          await Deno.mkdir(join(dir.path, "image"));
          // The base is the cached test image (nothing is pulled); the build marks its result.
          await Deno.writeTextFile(
            join(dir.path, "image", "Dockerfile"),
            `FROM ${rt.image}\nENV DEFT_BUILT_FOR_BATCH=yes\n`,
          );
          const built = () => rt.cli("images", "-q", "--filter", "label=deft.image=1");
          const before = await built();
          const buildFile = join(dir.path, "build.jsonl");
          await Deno.writeTextFile(
            buildFile,
            JSON.stringify({
              id: "built",
              dockerfile: "image/Dockerfile",
              replay: "fix.json",
              // Passes only in the built image, with the model's fix.
              test: 'test "$DEFT_BUILT_FOR_BATCH" = yes && python3 test_calc.py',
            }) + "\n",
          );
          const run = await runDeft([
            "batch",
            buildFile,
            "--out",
            out,
            "--container-runtime",
            runtime,
            "--output-format",
            "json",
          ], { env });
          assert.equal(run.code, 0, run.stderr);
          const result = JSON.parse(await Deno.readTextFile(join(out, "built", "result.json")));
          assert.equal(result.status, "passed", JSON.stringify(result));
          assert.equal(result.dockerfile, join(dir.path, "image", "Dockerfile"));
          assert.deepEqual(await batchContainers(rt, out), []);
          assert.equal(await built(), before, "the image built for the task was removed");
        },
      );
    } finally {
      for (const tag of tags) await rt.cli("rmi", tag).catch(() => {});
    }
  });
}
