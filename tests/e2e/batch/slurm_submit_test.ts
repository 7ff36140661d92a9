/**
 * What `deft batch --slurm` asks of Slurm, read from a stand-in `sbatch` on PATH that records its
 * arguments: the array's concurrency throttle (`%C`) and a time limit with room beyond Deft's
 * own. On a real cluster neither is visible unless the node has more CPUs than the throttle and a
 * task runs long, so the real-cluster test (tests/e2e/batch/slurm_test.ts) cannot catch them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { shellQuote, submitArray } from "../../../src/batch/slurm.ts";
import { submitSlurm } from "../../../src/batch/orchestrate.ts";
import { parseTasks } from "../../../src/batch/tasks.ts";
import { tempDir } from "../../helpers/temp.ts";

async function submitted(
  request: { concurrency: number; maxTaskSeconds: number; slurmArgs?: string[] },
): Promise<string[]> {
  await using tmp = await tempDir("deft-fake-sbatch-");
  const bin = join(tmp.path, "bin");
  await Deno.mkdir(bin);
  const log = join(tmp.path, "args");
  await Deno.writeTextFile(
    join(bin, "sbatch"),
    `#!/bin/bash\nprintf '%s\\0' "$@" > '${log}'\necho '4242;cluster'\n`,
    { mode: 0o755 },
  );
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  try {
    const id = await submitArray({
      tasksFile: join(tmp.path, "tasks.jsonl"),
      out: join(tmp.path, "out"),
      indices: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      concurrency: request.concurrency,
      deft: ["deft"],
      batchArgs: [],
      slurmArgs: request.slurmArgs ?? [],
      maxTaskSeconds: request.maxTaskSeconds,
    });
    assert.equal(id, "4242");
  } finally {
    Deno.env.set("PATH", path);
  }
  return (await Deno.readTextFile(log)).split("\0").slice(0, -1);
}

Deno.test("slurm: the array runs at most --concurrency tasks at once (%C)", async () => {
  for (const concurrency of [1, 3, 16]) {
    const args = await submitted({ concurrency, maxTaskSeconds: 600 });
    assert.ok(args.includes(`--array=0-9%${concurrency}`), args.join(" "));
  }
});

Deno.test("slurm: the job's time limit leaves room beyond a task's own limit", async () => {
  for (const seconds of [60, 600, 3600]) {
    const args = await submitted({ concurrency: 2, maxTaskSeconds: seconds });
    const time = args.find((a) => a.startsWith("--time="));
    assert.ok(time, args.join(" "));
    const minutes = Number(time.slice("--time=".length));
    // A quarter more than Deft's own limit plus a minute for checkout, test and grace.
    assert.ok(minutes * 60 >= seconds * 1.25 + 60, `${time} for a ${seconds} s task`);
    assert.equal(minutes, Math.ceil((seconds * 1.25 + 60) / 60));
  }
  // The user's own --time wins.
  const own = await submitted({ concurrency: 2, maxTaskSeconds: 600, slurmArgs: ["--time=5"] });
  assert.deepEqual(own.filter((a) => a.startsWith("--time")), ["--time=5"]);
});

Deno.test("slurm: each array task gets the batch's container and prediction flags", async () => {
  await using tmp = await tempDir("deft-fake-sbatch-");
  const bin = join(tmp.path, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "sbatch"), "#!/bin/bash\necho 77\n", { mode: 0o755 });
  const out = join(tmp.path, "out");
  const tasksFile = join(tmp.path, "swe.jsonl");
  await Deno.writeTextFile(
    tasksFile,
    JSON.stringify({ instance_id: "a__b-1", problem_statement: "p", repo: "a/b" }) + "\n",
  );
  const template = "reg/sweb.eval.x86_64.{swebench_id}:latest";
  const tasks = parseTasks(await Deno.readTextFile(tasksFile), tasksFile, {
    imageTemplate: template,
  });
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  try {
    const submitted = await submitSlurm(tasks, tasksFile, out, {
      containerRuntime: "podman",
      imageTemplate: template,
      modelNameOrPath: "my model",
      model: "m-1",
    });
    assert.equal(submitted.jobId, "77");
  } finally {
    Deno.env.set("PATH", path);
  }
  const script = await Deno.readTextFile(join(out, "slurm", "array.sh"));
  const exec = script.split("\n").find((l) => l.startsWith("exec "))!;
  // The node's `deft batch --index` starts the task's container itself, with the same runtime,
  // images and prediction name as this batch.
  assert.ok(exec.includes(" --container-runtime podman "), exec);
  assert.ok(exec.includes(` --image-template ${shellQuote(template)} `), exec);
  assert.ok(exec.includes(" --model-name-or-path 'my model' "), exec);
  assert.ok(exec.includes(" -m m-1 "), exec);
  assert.ok(exec.endsWith(` --index "$SLURM_ARRAY_TASK_ID"`), exec);
  // The words bash reads back are the flags themselves.
  const words = new Deno.Command("bash", {
    args: ["-c", `printf '%s\\n' ${exec.slice("exec ".length).replace(/ --index.*$/, "")}`],
  }).outputSync();
  const argv = new TextDecoder().decode(words.stdout).trimEnd().split("\n");
  const at = argv.indexOf("--image-template");
  assert.equal(argv[at + 1], template);
  assert.equal(argv[argv.indexOf("--model-name-or-path") + 1], "my model");
});

Deno.test("slurm: each array task gets the default image, or builds/loads it on its node", async () => {
  await using tmp = await tempDir("deft-fake-sbatch-");
  const bin = join(tmp.path, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "sbatch"), "#!/bin/bash\necho 78\n", { mode: 0o755 });
  const tasksFile = join(tmp.path, "t.jsonl");
  await Deno.writeTextFile(tasksFile, JSON.stringify({ id: "t1", task: "fix" }) + "\n");
  const tasks = parseTasks(await Deno.readTextFile(tasksFile), tasksFile, { defaultImage: true });
  const path = Deno.env.get("PATH") ?? "";
  Deno.env.set("PATH", `${bin}:${path}`);
  const cwd = Deno.cwd();
  const execLine = async (out: string, settings: Record<string, unknown>) => {
    await submitSlurm(tasks, tasksFile, out, settings);
    const script = await Deno.readTextFile(join(out, "slurm", "array.sh"));
    return script.split("\n").find((l) => l.startsWith("exec "))!;
  };
  try {
    const named = await execLine(join(tmp.path, "o1"), {
      dockerImage: "reg/img:1",
      dockerKeep: true,
    });
    assert.ok(named.includes(" --docker-image reg/img:1 "), named);
    assert.ok(named.includes(" --docker-keep "), named);
    // A relative Dockerfile or archive reaches the node as an absolute path.
    Deno.chdir(tmp.path);
    const built = await execLine(join(tmp.path, "o2"), { dockerfilePath: "img/Dockerfile" });
    assert.ok(built.includes(` --dockerfile-path ${join(tmp.path, "img/Dockerfile")} `), built);
    assert.ok(!built.includes("--docker-keep"), built);
    const loaded = await execLine(join(tmp.path, "o3"), { dockerImageFile: "img.tar" });
    assert.ok(loaded.includes(` --docker-image-file ${join(tmp.path, "img.tar")} `), loaded);
  } finally {
    Deno.chdir(cwd);
    Deno.env.set("PATH", path);
  }
});
