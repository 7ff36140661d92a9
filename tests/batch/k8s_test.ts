import assert from "node:assert/strict";
import { parse } from "yaml";
import { indexedJob } from "../../src/batch/k8s.ts";

const request = {
  tasksFile: "/shared/tasks.jsonl",
  out: "/shared/runs/one",
  total: 12,
  concurrency: 3,
  deft: ["deno", "run", "--allow-read", "/shared/deft.js"],
  batchArgs: ["-m", "model x", "--timeout", "600"],
};

Deno.test("--emit k8s: an Indexed Job whose pod K runs task K from the shared volume", () => {
  const job = parse(indexedJob(request));
  assert.equal(job.kind, "Job");
  assert.equal(job.spec.completionMode, "Indexed");
  assert.equal(job.spec.completions, 12);
  assert.equal(job.spec.parallelism, 3);
  const pod = job.spec.template.spec;
  assert.equal(pod.restartPolicy, "Never");
  const [shell, flag, script] = pod.containers[0].command;
  assert.deepEqual([shell, flag], ["bash", "-c"]);
  assert.equal(
    script,
    "exec deno run --allow-read /shared/deft.js batch /shared/tasks.jsonl --out /shared/runs/one " +
      `-m 'model x' --timeout 600 --index "$JOB_COMPLETION_INDEX"`,
  );
  assert.equal(pod.containers[0].volumeMounts[0].mountPath, "/shared");
  assert.equal(pod.containers[0].envFrom[0].secretRef.name, "deft-api-keys");
});

Deno.test("--emit k8s refuses paths that share no folder to mount", () => {
  assert.throws(
    () => indexedJob({ ...request, out: "/elsewhere/out" }),
    /no common folder below \//,
  );
});
