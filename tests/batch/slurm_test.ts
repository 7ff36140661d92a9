/**
 * What `deft batch --slurm` asks of Slurm, read from a stand-in `sbatch` on PATH that records its
 * arguments: the array's concurrency throttle (`%C`) and a time limit with room beyond Deft's
 * own. On a real cluster neither is visible unless the node has more CPUs than the throttle and a
 * task runs long, so the real-cluster test (tests/e2e/batch/slurm_test.ts) cannot catch them.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { submitArray } from "../../src/batch/slurm.ts";
import { tempDir } from "../helpers/temp.ts";

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
