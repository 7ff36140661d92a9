/**
 * `deft batch` throughput: 20 replayed tasks (real checkouts, real `deft run --replay`, real
 * tests) on the local pool at concurrency 1 and 4 (the speed-up), then the same 20 tasks as a
 * Slurm job array (`%4`) on a local single-node cluster started for the run, against the local
 * pool at 4: Slurm's overhead per task. Needs root for the cluster; without it that part is skipped.
 */
import { join } from "node:path";
import { deftFlags } from "../scripts/deft_flags.ts";
import { makeBatchFixture } from "../tests/helpers/batch_fixture.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const TASKS = 20;
const PORTS = { SLURM_LOCAL_CTLD_PORT: "7931", SLURM_LOCAL_SLURMD_PORT: "7932" };

async function timedBatch(args: string[], env: Record<string, string> = {}): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${ROOT}main.ts`, "batch", ...args],
    env,
    stdout: "null",
    stderr: "piped",
  }).output();
  const elapsed = (performance.now() - start) / 1000;
  if (!out.success) {
    throw new Error(`deft batch failed: ${new TextDecoder().decode(out.stderr).slice(-600)}`);
  }
  return elapsed;
}

export default async function batchBench(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "deft-batch-bench-" });
  await Deno.chmod(dir, 0o755); // the Slurm cluster's munge socket lives below it
  try {
    const { tasksFile } = await makeBatchFixture(dir, TASKS);
    const run = (name: string, ...extra: string[]) =>
      timedBatch([tasksFile, "--out", join(dir, name), ...extra]);
    const one = await run("c1", "--concurrency", "1");
    const four = await run("c4", "--concurrency", "4");
    console.log(
      `batch: ${TASKS} replayed tasks, concurrency 1: ${one.toFixed(1)} s, 4: ${
        four.toFixed(1)
      } s; speed-up 4 vs 1: ${(one / four).toFixed(2)}x (${navigator.hardwareConcurrency} cores)`,
    );

    if (Deno.uid() !== 0) {
      console.log("batch: Slurm part skipped (the local cluster needs root)");
      return;
    }
    const cluster = join(dir, "cluster");
    const start = await new Deno.Command(`${ROOT}scripts/slurm/start-local-slurm.sh`, {
      args: [cluster],
      env: { ...PORTS, SLURM_LOCAL_CPUS: "4" },
      stdout: "null",
      stderr: "piped",
    }).output();
    try {
      if (!start.success) {
        console.log(`batch: Slurm part skipped: ${new TextDecoder().decode(start.stderr).trim()}`);
        return;
      }
      const env = { SLURM_CONF: join(cluster, "slurm.conf") };
      const slurm = await timedBatch(
        [tasksFile, "--out", join(dir, "slurm"), "--slurm", "--wait", "--concurrency", "4"],
        env,
      );
      const perTask = (slurm - four) / TASKS;
      console.log(
        `batch: Slurm array %4 on a 4-CPU local node: ${slurm.toFixed(1)} s vs local pool at 4: ${
          four.toFixed(1)
        } s; ratio ${(slurm / four).toFixed(2)}x, overhead ${
          (perTask * 1000).toFixed(0)
        } ms per task (${((perTask / (four * 4 / TASKS)) * 100).toFixed(0)}% of a task's time)`,
      );
    } finally {
      await new Deno.Command(`${ROOT}scripts/slurm/stop-local-slurm.sh`, {
        args: [cluster],
        stdout: "null",
        stderr: "null",
      }).output();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
