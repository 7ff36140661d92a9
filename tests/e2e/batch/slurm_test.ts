/**
 * `deft batch --slurm` against a real single-node Slurm cluster that the test starts with the
 * project's own script (scripts/slurm/start-local-slurm.sh; it apt-installs Slurm and munge when
 * they are missing) on ports of its own, and stops at the end. The daemons need root, so these
 * tests run where the suite runs as root (CI does); there the batch is submitted, run, followed,
 * cancelled and resubmitted by root and by `nobody`, a user who is not root.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import {
  hangSeconds,
  makeBatchFixture,
  processesWith,
  scriptedTrajectory,
} from "../../helpers/batch_fixture.ts";
import { tempDir } from "../../helpers/temp.ts";
import { nobody, NOBODY_UID } from "../../helpers/as_nobody.ts";

const PORTS = { SLURM_LOCAL_CTLD_PORT: "7941", SLURM_LOCAL_SLURMD_PORT: "7942" };
const NOT_ROOT = Deno.uid() !== 0;

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

/**
 * Starts a cluster in DIR/cluster; returns the environment its clients need. `stop` ends it (and
 * every job of it) even when the start failed half-way.
 */
async function startCluster(
  dir: string,
): Promise<{ env: Record<string, string>; stop(): Promise<void> }> {
  await Deno.chmod(dir, 0o755); // munged's socket must be reachable by all
  const cluster = join(dir, "cluster");
  const stop = async () => {
    await sh(`${REPO_ROOT}scripts/slurm/stop-local-slurm.sh`, [cluster]);
  };
  const start = await sh(`${REPO_ROOT}scripts/slurm/start-local-slurm.sh`, [cluster], {
    ...PORTS,
    SLURM_LOCAL_CPUS: "4",
  });
  if (start.code !== 0) {
    await stop();
    assert.fail(`the cluster did not start:\n${start.stderr}`);
  }
  assert.match(start.stdout, /^export SLURM_CONF=.*slurm\.conf$/m);
  return { env: { SLURM_CONF: join(cluster, "slurm.conf") }, stop };
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
  ignore: NOT_ROOT,
  sanitizeResources: false,
  fn: async () => {
    await using tmp = await tempDir("deft-slurm-");
    const dir = tmp.path;
    const { env, stop } = await startCluster(dir);
    try {
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
      await stop();
    }
  },
});

/** What the array tasks of the batch in `out` printed (Slurm's job output), for a failure. */
function jobOutput(out: string): string {
  try {
    return [...Deno.readDirSync(join(out, "slurm"))].filter((e) => e.name.endsWith(".out"))
      .map((e) => `--- ${e.name}\n${Deno.readTextFileSync(join(out, "slurm", e.name))}`)
      .join("\n");
  } catch (e) {
    return `(no job output: ${(e as Error).message})`;
  }
}

/** Every file and folder under `dir` (itself included) that `uid` does not own. */
async function notOwnedBy(dir: string, uid: number): Promise<string[]> {
  const wrong: string[] = [];
  const walk = async (path: string) => {
    const info = await Deno.lstat(path);
    if (info.uid !== uid) wrong.push(`${path} (uid ${info.uid})`);
    if (info.isDirectory) {
      for await (const e of Deno.readDir(path)) {
        await walk(join(path, e.name));
      }
    }
  };
  await walk(dir);
  return wrong;
}

Deno.test({
  name: "a Slurm array submitted by a user who is not root runs as them: their uid, their files, " +
    "cancel and resubmit",
  ignore: NOT_ROOT,
  sanitizeResources: false,
  fn: async () => {
    await using tmp = await tempDir("deft-slurm-user-");
    // Made before the cluster starts, so its HOME is removed only after the cluster (and any job
    // of theirs a failure left running) has stopped.
    await using user = await nobody({ packages: true });
    const { env, stop } = await startCluster(tmp.path);
    try {
      const as = (program: string, args: string[]) => user.run(program, args, { env });
      // Their tasks, repositories and outputs, all in their HOME. Each task's test says who ran it.
      const work = join(user.home, "work");
      await Deno.mkdir(work);
      const { tasksFile, tasks } = await makeBatchFixture(work, 6, () => "fix", () => ({
        test: 'echo "task uid=$(id -u)"; python3 check.py',
      }));
      await user.give(work);
      const ids = tasks.map((t) => t.id);
      const out = join(work, "out");

      const submit = await user.deft(
        ["batch", tasksFile, "--out", out, "--slurm", "--concurrency", "2"]
          .concat(["--output-format", "json"]),
        { env },
      );
      assert.equal(submit.code, 0, `the submission as nobody failed:\n${submit.stderr}`);
      const job1 = JSON.parse(submit.stdout).job_id as string;
      assert.match(job1, /^\d+$/);
      // The queue holds the array as theirs; they cancel its second half while the first runs.
      const queue = await as("squeue", ["-h", "-r", "-j", job1, "-o", "%i|%U"]);
      assert.equal(queue.code, 0, queue.stderr);
      const lines = queue.stdout.trim().split("\n").filter((l) => l);
      assert.ok(lines.length > 0, "the array left the queue before it could be looked at");
      for (const line of lines) assert.match(line, new RegExp(`^${job1}_\\d+\\|${NOBODY_UID}$`));
      const cancel = await as("scancel", [`${job1}_[3-5]`]);
      assert.equal(cancel.code, 0, `nobody could not cancel their own tasks: ${cancel.stderr}`);
      const deadline = Date.now() + 240_000;
      while ((await queued(env, job1)).length > 0) {
        assert.ok(Date.now() < deadline, "the array is still queued after 240 s");
        await new Promise((r) => setTimeout(r, 300));
      }
      const mid = await user.deft(["batch", "status", out, "--output-format", "json"], { env });
      // Exit code 1: not every task has passed yet.
      assert.equal(mid.code, 1, mid.stderr);
      const midStatus = JSON.parse(mid.stdout);
      assert.deepEqual(midStatus.counts, { passed: 3, not_run: 3 }, jobOutput(out));
      assert.equal(midStatus.scheduler_error, null);

      const resubmit = await user.deft(
        ["batch", tasksFile, "--out", out, "--slurm", "--wait", "--concurrency", "2"],
        { env },
      );
      assert.equal(resubmit.code, 0, `${resubmit.stderr}\n${jobOutput(out)}`);
      const job2 = /submitted job array (\d+) \(3 task\(s\)/.exec(resubmit.stderr)?.[1];
      assert.ok(job2, resubmit.stderr);
      assert.match(resubmit.stderr, /6 tasks: 6 passed/);

      for (const [i, id] of ids.entries()) {
        const r = result(out, id);
        assert.equal(r.status, "passed", JSON.stringify(r));
        assert.equal(r.runner, `slurm:${i < 3 ? job1 : job2}_${i}`);
        assert.match(Deno.readTextFileSync(join(out, id, "patch.diff")), /^\+ {4}return a \+ b$/m);
        // The task's own processes ran as nobody, not as root (slurmd's user).
        assert.match(
          Deno.readTextFileSync(join(out, id, "deft.log")),
          new RegExp(`^task uid=${NOBODY_UID}$`, "m"),
        );
      }
      const lines2 = Deno.readTextFileSync(join(out, "results.jsonl")).trim().split("\n");
      assert.deepEqual(lines2.map((l) => JSON.parse(l).id).sort(), ids);
      assert.ok(lines2.every((l) => JSON.parse(l).status === "passed"), lines2.join("\n"));
      // Everything the batch wrote is theirs: results, checkouts, the job script, Slurm's logs.
      assert.ok(
        Deno.readDirSync(join(out, "slurm")).some((e) => e.name.endsWith(".out")),
        "Slurm wrote no job output",
      );
      assert.deepEqual(await notOwnedBy(out, NOBODY_UID), []);
      // Slurm itself ran both arrays for them (it forgets the tasks cancelled while pending).
      for (const [job, indices] of [[job1, ["0", "1", "2"]], [job2, ["3", "4", "5"]]] as const) {
        const shown = await as("scontrol", ["-o", "show", "job", job]);
        assert.equal(shown.code, 0, shown.stderr);
        const records = shown.stdout.trim().split("\n");
        const ran = records.map((r) => /\bArrayTaskId=(\d+)/.exec(r)?.[1]).sort();
        assert.deepEqual(ran, indices, shown.stdout);
        for (const record of records) {
          assert.match(record, new RegExp(`\\bUserId=nobody\\(${NOBODY_UID}\\)`));
          assert.match(record, /\bJobState=COMPLETED\b/);
        }
      }

      // A running task they cancel: Slurm's SIGTERM reaches their Deft, which marks the task
      // interrupted (to be run again, so not in results.jsonl) and ends what it started.
      const tag = 100_000 + Math.floor(Math.random() * 800_000); // no other run's needle
      const hang = join(work, "hang");
      const { tasksFile: hangTasks } = await makeBatchFixture(hang, 1, () => "hang", () => ({
        replay: "hang.json",
      }));
      await Deno.writeTextFile(
        join(hang, "hang.json"),
        JSON.stringify(scriptedTrajectory("hang", tag)),
      );
      await user.give(hang);
      const hangOut = join(hang, "out");
      const hangSubmit = await user.deft(
        ["batch", hangTasks, "--out", hangOut, "--slurm", "--output-format", "json"],
        { env },
      );
      assert.equal(hangSubmit.code, 0, hangSubmit.stderr);
      const job3 = JSON.parse(hangSubmit.stdout).job_id as string;
      const needle = `sleep ${hangSeconds(tag)}`;
      // The model's shell command, started by Deft inside the job, runs as nobody too. A process
      // that shows the needle only for an instant (it ends between the listing and the read) is
      // passed over: the long sleep itself must be read at least once.
      let seen = 0;
      const hangDeadline = Date.now() + 120_000;
      while (seen === 0) {
        if (Date.now() > hangDeadline) {
          // What the job said, to tell why its command never ran.
          const logs: string[] = [];
          const walk = (dir: string) => {
            for (
              const e of (() => {
                try {
                  return [...Deno.readDirSync(dir)];
                } catch {
                  return [];
                }
              })()
            ) {
              const f = join(dir, e.name);
              if (e.isDirectory) walk(f);
              else if (/\.(log|out|json)$/.test(e.name)) {
                logs.push(`--- ${f}:\n${Deno.readTextFileSync(f).slice(-3000)}`);
              }
            }
          };
          walk(hangOut);
          assert.fail(`the task's ${needle} was not seen within 120 s\n${logs.join("\n")}`);
        }
        for (const pid of processesWith(needle)) {
          // Read by a program: Deno reads /proc only with --allow-all, which CI does not grant.
          const read = await new Deno.Command("cat", {
            args: [`/proc/${pid}/status`],
            stdout: "piped",
            stderr: "null",
          }).output();
          const status = read.success ? new TextDecoder().decode(read.stdout) : "";
          if (!status) continue; // ended in between
          assert.match(status, new RegExp(`^Uid:\\s+${NOBODY_UID}\\s`, "m"), status);
          seen++;
        }
        if (seen === 0) await new Promise((r) => setTimeout(r, 200));
      }
      const stopJob = await as("scancel", [job3]);
      assert.equal(
        stopJob.code,
        0,
        `nobody could not cancel their running task: ${stopJob.stderr}`,
      );
      while ((await queued(env, job3)).length > 0) {
        assert.ok(Date.now() < hangDeadline, "the cancelled task is still queued");
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(processesWith(needle), [], `${needle} outlived the cancelled task`);
      const interrupted = result(hangOut, "t00");
      assert.equal(interrupted.status, "interrupted", jobOutput(hangOut));
      assert.equal(interrupted.runner, `slurm:${job3}_0`);
      const listed = await Deno.readTextFile(join(hangOut, "results.jsonl")).catch(() => "");
      assert.equal(listed, "", "an interrupted task is not listed among the results");
      assert.deepEqual(await notOwnedBy(hangOut, NOBODY_UID), []);

      // Stopping the cluster ends its jobs, but not a process that merely has its SLURM_CONF
      // (the shell that ran `eval "$(start-local-slurm.sh DIR)"`, a `deft batch --wait`).
      const jobSleep = `sleep ${hangSeconds(tag + 1)}`;
      const left = await as("sbatch", ["--chdir=/", "--output=/dev/null", "--wrap", jobSleep]);
      assert.equal(left.code, 0, left.stderr);
      const leftDeadline = Date.now() + 60_000;
      const bystander = new Deno.Command("sleep", {
        args: [String(hangSeconds(tag + 2))],
        env,
        stdout: "null",
        stderr: "null",
      }).spawn();
      try {
        while (processesWith(jobSleep).length === 0) {
          assert.ok(Date.now() < leftDeadline, `the job's ${jobSleep} did not start within 60 s`);
          await new Promise((r) => setTimeout(r, 200));
        }
        await stop();
        assert.deepEqual(processesWith(jobSleep), [], "a job outlived the stopped cluster");
        assert.ok(
          processesWith(`sleep ${hangSeconds(tag + 2)}`).includes(bystander.pid),
          "stopping the cluster killed a process that is not one of its jobs",
        );
      } finally {
        try {
          bystander.kill("SIGKILL");
        } catch {
          // Already gone: the assertion above says why.
        }
        await bystander.status;
      }
    } finally {
      await stop();
    }
  },
});
