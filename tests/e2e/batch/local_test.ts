/**
 * `deft batch` on the local pool, end to end: real git checkouts, real `deft run --replay`
 * processes, real bash, real signals.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT, runDeft } from "../../helpers/deft.ts";
import {
  daemonTest,
  hangSeconds,
  makeBatchFixture,
  processesWith,
} from "../../helpers/batch_fixture.ts";
import { tempDir } from "../../helpers/temp.ts";

interface Result {
  id: string;
  status: string;
  success: boolean;
  steps: number | null;
  tokens: { total: number } | null;
  cost: number | null;
  duration: number;
  test_exit_code: number | null;
  error: string | null;
  finished_at: string;
  runner: string;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).trim();
}

function readResults(out: string): Result[] {
  return Deno.readTextFileSync(join(out, "results.jsonl")).trimEnd().split("\n").map((l) =>
    JSON.parse(l)
  );
}

function readResult(out: string, id: string): Result {
  return JSON.parse(Deno.readTextFileSync(join(out, id, "result.json")));
}

Deno.test({
  name: "20 tasks, 4 at a time: own checkouts, patches and results; a hang is timed out; resumable",
  sanitizeResources: false,
  fn: async () => {
    const dirTemp = await tempDir("deft-batch-");
    const dir = dirTemp.path;
    try {
      const { tasksFile, tasks } = await makeBatchFixture(
        dir,
        20,
        (i) => i === 7 ? "hang" : i === 12 ? "idle" : "fix",
        (i) => i === 7 ? { timeout: 4 } : i === 3 ? { test: daemonTest(3) } : {},
      );
      const out = join(dir, "out");
      const args = ["batch", tasksFile, "--out", out, "--concurrency", "4"];
      const first = await runDeft([...args, "--output-format", "json"]);
      assert.equal(first.code, 1, first.stderr);
      const summary = JSON.parse(first.stdout);
      assert.deepEqual(summary.counts, { passed: 18, timeout: 1, failed: 1 }, first.stderr);
      assert.equal(summary.total, 20);

      for (const [i, task] of tasks.entries()) {
        const taskDir = join(out, task.id);
        for (const file of ["trajectory.json", "patch.diff", "result.json"]) {
          assert.ok(Deno.statSync(join(taskDir, file)).isFile, `${task.id}/${file}`);
        }
        // Its own clone at the task's commit, not the source repository.
        const ws = join(taskDir, "workspace");
        assert.equal(await git(ws, "rev-parse", "HEAD"), task.commit);
        assert.equal(await git(ws, "rev-parse", "--show-toplevel"), ws);
        const patch = Deno.readTextFileSync(join(taskDir, "patch.diff"));
        const result = readResult(out, task.id);
        if (i === 7) {
          assert.equal(result.status, "timeout");
          assert.match(result.error!, /timed out after 4 s/);
          assert.ok(result.duration < 30, `the hang took ${result.duration}s`);
        } else if (i === 12) {
          assert.equal(result.status, "failed");
          assert.equal(result.test_exit_code, 1);
          assert.equal(patch, "");
        } else {
          assert.equal(result.status, "passed", JSON.stringify(result));
          assert.equal(result.success, true);
          assert.equal(result.test_exit_code, 0);
          assert.equal(result.steps, 3);
          assert.equal(result.tokens?.total, 360);
          assert.equal(result.cost, null);
          assert.equal(result.runner, "local");
          assert.match(patch, new RegExp(`# repository ${i}\\n[\\s\\S]*\\+    return a \\+ b`));
        }
        const trajectory = JSON.parse(Deno.readTextFileSync(join(taskDir, "trajectory.json")));
        assert.equal(trajectory.working_dir, ws);
      }
      // The source repositories were never touched.
      assert.equal(await git(join(dir, "repos", "t03"), "status", "--porcelain"), "");
      // One whole JSON line per task, whatever order they finished in.
      const lines = readResults(out);
      assert.deepEqual(lines.map((r) => r.id).sort(), tasks.map((t) => t.id));
      // The hung command is gone, not orphaned, and so is the daemon the test command left.
      assert.deepEqual(processesWith(`sleep ${hangSeconds(7)}`), []);
      assert.deepEqual(processesWith(`sleep ${hangSeconds(3)}`), []);

      const second = await runDeft(args);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /20 task\(s\) already finished/);
      assert.match(second.stderr, /0 task\(s\), 4 at a time/);
      assert.equal(readResults(out).length, 20);

      const before = readResult(out, "t00").finished_at;
      const retry = await runDeft([...args, "--retry-failed"]);
      assert.match(retry.stderr, /2 task\(s\), 4 at a time/);
      const again = readResults(out).slice(20).map((r) => r.id).sort();
      assert.deepEqual(again, ["t07", "t12"]);
      assert.equal(readResult(out, "t00").finished_at, before);
      assert.match(retry.stderr, /18 passed/);
    } finally {
      await dirTemp.remove();
    }
  },
});

Deno.test({
  name: "SIGINT mid-batch: running tasks are interrupted and recorded, a rerun finishes the rest",
  sanitizeResources: false,
  fn: async () => {
    const dirTemp = await tempDir("deft-batch-int-");
    const dir = dirTemp.path;
    try {
      const hang = (i: number) => i === 1 || i === 2;
      const { tasksFile } = await makeBatchFixture(dir, 5, (i) => hang(i) ? "hang" : "fix");
      const out = join(dir, "out");
      const args = ["batch", tasksFile, "--out", out, "--concurrency", "3"];
      const child = startDeft([...args, "--timeout", "300"]);
      const output = child.output();
      // Wait until t00 has finished and both hangs are inside their sleep.
      const deadline = Date.now() + 180_000;
      while (
        Date.now() < deadline &&
        !(exists(join(out, "t00", "result.json")) &&
          processesWith(`sleep ${hangSeconds(1)}`).length &&
          processesWith(`sleep ${hangSeconds(2)}`).length)
      ) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(Date.now() < deadline, "the batch never reached the hanging tasks");
      // `status` sees what the live batch is doing.
      const live = JSON.parse(
        (await runDeft(["batch", "status", out, "--output-format", "json"]))
          .stdout,
      );
      assert.ok(live.counts.running >= 2 && live.counts.passed >= 1, JSON.stringify(live.counts));
      child.kill("SIGINT");
      const done = await output;
      const stderr = new TextDecoder().decode(done.stderr);
      assert.equal(done.code, 130, stderr);
      assert.match(stderr, /interrupted: stopping the running tasks/);

      assert.equal(readResult(out, "t00").status, "passed");
      for (const id of ["t01", "t02"]) {
        const result = readResult(out, id);
        assert.equal(result.status, "interrupted");
        // deft run recorded the step it was in before it stopped.
        const trajectory = JSON.parse(Deno.readTextFileSync(join(out, id, "trajectory.json")));
        assert.ok(trajectory.llm_interactions.length >= 1);
        assert.ok(exists(join(out, id, "patch.diff")));
      }
      assert.deepEqual(processesWith(`sleep ${hangSeconds(1)}`), [], stderr);
      assert.deepEqual(processesWith(`sleep ${hangSeconds(2)}`), [], stderr);
      const after = JSON.parse(
        (await runDeft(["batch", "status", out, "--output-format", "json"]))
          .stdout,
      );
      assert.equal(after.counts.running, undefined, JSON.stringify(after.counts));
      assert.ok(after.counts.interrupted >= 2, JSON.stringify(after.counts));
      const recorded = readResults(out);
      assert.deepEqual(
        recorded.filter((r) => r.status === "interrupted"),
        [],
        "results.jsonl lists finished tasks only",
      );
      const finishedIds = recorded.map((r) => r.id);

      // The rerun runs exactly the tasks that had not finished.
      const rerun = await runDeft([...args, "--timeout", "25"]);
      const rerunIds = readResults(out).slice(recorded.length).map((r) => r.id).sort();
      const expected = ["t00", "t01", "t02", "t03", "t04"].filter((id) =>
        !finishedIds.includes(id)
      );
      assert.deepEqual(rerunIds, expected, rerun.stderr);
      assert.equal(readResult(out, "t01").status, "timeout");
      for (const id of ["t00", "t03", "t04"]) assert.equal(readResult(out, id).status, "passed");
    } finally {
      await dirTemp.remove();
    }
  },
});

Deno.test({
  name: "SIGKILL of the batch: its running tasks and their commands die with it",
  sanitizeResources: false,
  fn: async () => {
    const dirTemp = await tempDir("deft-batch-kill-");
    const dir = dirTemp.path;
    try {
      const { tasksFile } = await makeBatchFixture(dir, 2, () => "hang");
      const out = join(dir, "out");
      // A killed Deft cannot remove its temp folders: they go to this test's, removed with it.
      const tmp = join(dir, "tmp");
      await Deno.mkdir(tmp);
      const child = startDeft([
        "batch",
        tasksFile,
        "--out",
        out,
        "--concurrency",
        "2",
        "--timeout",
        "300",
      ], { TMPDIR: tmp });
      const hanging = () =>
        processesWith(`sleep ${hangSeconds(0)}`).length > 0 &&
        processesWith(`sleep ${hangSeconds(1)}`).length > 0;
      const deadline = Date.now() + 180_000;
      while (Date.now() < deadline && !hanging()) await new Promise((r) => setTimeout(r, 100));
      assert.ok(hanging(), "both tasks reached their hanging command");
      assert.ok(processesWith(out).length > 0, "the tasks' deft run processes are running");
      const ended = child.output();
      child.kill("SIGKILL");
      await ended;
      const gone = Date.now() + 15_000;
      while (Date.now() < gone && (processesWith(out).length || hanging())) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(processesWith(out), [], "no task process outlives the batch");
      assert.deepEqual(processesWith(`sleep ${hangSeconds(0)}`), []);
      assert.deepEqual(processesWith(`sleep ${hangSeconds(1)}`), []);

      // They count as unfinished: the next run does them again.
      const rerun = await runDeft(["batch", tasksFile, "--out", out, "--timeout", "3"]);
      assert.match(rerun.stderr, /2 task\(s\)/, rerun.stderr);
      assert.deepEqual(readResults(out).map((r) => [r.id, r.status]).sort(), [
        ["t00", "timeout"],
        ["t01", "timeout"],
      ]);
    } finally {
      await dirTemp.remove();
    }
  },
});

/** `deft ARGS` started in the background, its output piped. */
function startDeft(args: string[], env: Record<string, string> = {}): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("a repository that cannot be cloned or a missing commit is an error result, not a stop", async () => {
  const dirTemp = await tempDir("deft-batch-bad-");
  const dir = dirTemp.path;
  try {
    const { tasks } = await makeBatchFixture(dir, 1);
    const tasksFile = join(dir, "bad.jsonl");
    const lines = [
      { id: "gone", repo: "no/such/repo", task: "x" },
      { id: "commit", repo: tasks[0].repo, commit: "0123456789abcdef", task: "x" },
    ];
    await Deno.writeTextFile(tasksFile, lines.map((l) => JSON.stringify(l)).join("\n"));
    const out = join(dir, "out");
    const run = await runDeft(["batch", tasksFile, "--out", out, "--concurrency", "2"]);
    assert.equal(run.code, 1, run.stderr);
    const gone = readResult(out, "gone");
    assert.equal(gone.status, "error");
    assert.match(gone.error!, /git clone failed: .*no\/such\/repo/);
    const commit = readResult(out, "commit");
    assert.equal(commit.status, "error");
    assert.match(commit.error!, /commit 0123456789abcdef not found in /);
    assert.equal(readResults(out).length, 2);
  } finally {
    await dirTemp.remove();
  }
});
