/**
 * `deft batch --slurm` against a real single-node Slurm cluster that the test starts with the
 * project's own script (scripts/slurm/start-local-slurm.sh; it apt-installs Slurm and munge when
 * they are missing) on ports of its own, and stops at the end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import { makeBatchFixture } from "../../batch/fixture.ts";
import { tempDir } from "../../helpers/temp.ts";

const PORTS = { SLURM_LOCAL_CTLD_PORT: "7941", SLURM_LOCAL_SLURMD_PORT: "7942" };

async function sh(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

function taskFiles(out: string, id: string): string[] {
  return [...Deno.readDirSync(join(out, id))].map((e) => e.name).filter((n) => !n.endsWith(".tmp"))
    .sort();
}

function result(out: string, id: string) {
  return JSON.parse(Deno.readTextFileSync(join(out, id, "result.json")));
}

async function queued(env: Record<string, string>, job: string): Promise<string[]> {
  const q = await sh("squeue", ["-h", "-r", "-j", job, "-o", "%i|%T"], env);
  return q.stdout.split("\n").filter((l) => l.trim()).sort();
}

Deno.test({
  name: "a 10-task Slurm array: same files as the local pool, live status, resubmit after cancel",
  ignore: Deno.uid() !== 0,
  sanitizeResources: false,
  fn: async () => {
    await using tmp = await tempDir("deft-slurm-");
    const dir = tmp.path;
    await Deno.chmod(dir, 0o755); // munged's socket must be reachable by all
    const cluster = join(dir, "cluster");
    const start = await sh(`${REPO_ROOT}scripts/slurm/start-local-slurm.sh`, [cluster], {
      ...PORTS,
      SLURM_LOCAL_CPUS: "4",
    });
    try {
      assert.equal(start.code, 0, start.stderr);
      assert.match(start.stdout, /^export SLURM_CONF=.*slurm\.conf$/m);
      const env = { SLURM_CONF: join(cluster, "slurm.conf") };
      const { tasksFile, tasks } = await makeBatchFixture(dir, 10);
      const ids = tasks.map((t) => t.id);

      // The local pool, for comparison.
      const local = join(dir, "local");
      const pool = await runDeft(["batch", tasksFile, "--out", local, "--concurrency", "4"]);
      assert.equal(pool.code, 0, pool.stderr);

      // The array, followed through `deft batch status` while it runs.
      const out = join(dir, "slurm");
      const submit = await runDeft(
        [
          "batch",
          tasksFile,
          "--out",
          out,
          "--slurm",
          "--concurrency",
          "4",
          "--output-format",
          "json",
        ],
        { env },
      );
      assert.equal(submit.code, 0, submit.stderr);
      const job = JSON.parse(submit.stdout).job_id as string;
      assert.match(job, /^\d+$/);
      let sawRunning = false;
      let checked = 0;
      const deadline = Date.now() + 240_000;
      while (Date.now() < deadline) {
        const before = await queued(env, job);
        const status = await runDeft(["batch", "status", out, "--output-format", "json"], { env });
        const after = await queued(env, job);
        const summary = JSON.parse(status.stdout);
        const counts = summary.counts as Record<string, number>;
        assert.equal(Object.values(counts).reduce((a, b) => a + b, 0), 10);
        assert.deepEqual(summary.slurm_jobs, [job]);
        if (before.join() === after.join()) {
          // The queue did not move during the status call: status must agree with it exactly.
          const running = before.filter((l) => l.endsWith("|RUNNING")).length;
          const pending = before.filter((l) => l.endsWith("|PENDING")).length;
          assert.equal(counts.running ?? 0, running, JSON.stringify({ before, counts }));
          assert.equal(counts.pending ?? 0, pending, JSON.stringify({ before, counts }));
          checked++;
          if (running > 0) sawRunning = true;
        }
        if (after.length === 0 && counts.passed === 10) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.ok(sawRunning && checked > 1, `status was never checked while tasks ran (${checked})`);
      for (const [i, id] of ids.entries()) {
        assert.deepEqual(taskFiles(out, id), taskFiles(local, id), id);
        assert.equal(
          Deno.readTextFileSync(join(out, id, "patch.diff")),
          Deno.readTextFileSync(join(local, id, "patch.diff")),
        );
        const r = result(out, id);
        assert.equal(r.status, "passed");
        assert.equal(r.runner, `slurm:${job}_${i}`);
      }
      assert.equal(Deno.readTextFileSync(join(out, "results.jsonl")).trim().split("\n").length, 10);
      const again = await runDeft(["batch", tasksFile, "--out", out, "--slurm", "--wait"], { env });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr, /every task has finished; nothing to submit/);

      // Cancel the second half while the first runs; resubmitting runs only what is missing.
      const half = join(dir, "half");
      const first = await runDeft(
        [
          "batch",
          tasksFile,
          "--out",
          half,
          "--slurm",
          "--concurrency",
          "2",
          "--output-format",
          "json",
        ],
        { env },
      );
      const job1 = JSON.parse(first.stdout).job_id as string;
      const cancel = await sh("scancel", [`${job1}_[5-9]`], env);
      assert.equal(cancel.code, 0, cancel.stderr);
      while ((await queued(env, job1)).length > 0) await new Promise((r) => setTimeout(r, 300));
      const mid = JSON.parse(
        (await runDeft(["batch", "status", half, "--output-format", "json"], { env })).stdout,
      );
      assert.deepEqual(mid.counts, { passed: 5, not_run: 5 });

      const resubmit = await runDeft(
        ["batch", tasksFile, "--out", half, "--slurm", "--wait", "--concurrency", "4"],
        { env },
      );
      assert.equal(resubmit.code, 0, resubmit.stderr);
      const job2 = /submitted job array (\d+) \(5 task\(s\)/.exec(resubmit.stderr)?.[1];
      assert.ok(job2, resubmit.stderr);
      for (const [i, id] of ids.entries()) {
        assert.equal(result(half, id).runner, `slurm:${i < 5 ? job1 : job2}_${i}`);
        assert.equal(result(half, id).status, "passed");
      }
      assert.equal(
        Deno.readTextFileSync(join(half, "results.jsonl")).trim().split("\n").length,
        10,
      );
      assert.match(resubmit.stderr, /10 tasks: 10 passed/);
    } finally {
      await sh(`${REPO_ROOT}scripts/slurm/stop-local-slurm.sh`, [cluster]);
    }
  },
});
