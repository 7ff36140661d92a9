import assert from "node:assert/strict";
import { firstDifference } from "../../../src/agent/replay.ts";
import { normalizeVolatile } from "../../../src/agent/volatile.ts";
import { runDeft, runMocked } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo, resetRepo } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";

/** Records a `deft run` of `task` against `mock` into the trajectory `traj`; it must succeed. */
async function record(mock: MockLLM, task: string, repo: string, home: string, traj: string) {
  const r = await runMocked(mock, task, repo, {
    extra: ["-t", traj],
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(r.code, 0, r.stderr);
}

Deno.test("volatile text: timings, temp paths and pids normalise; counts do not", () => {
  const same = (a: string, b: string) => normalizeVolatile(a) === normalizeVolatile(b);
  assert.ok(same("Ran 2 tests in 0.003s\n\nOK", "Ran 2 tests in 0.104s\n\nOK"));
  assert.ok(same("took 12ms", "took 7 ms"));
  assert.ok(same("made /tmp/tmp.Xk2a9/out", "made /tmp/tmp.Qq81z/out"));
  assert.ok(same("worker pid 4711 started", "worker pid 81 started"));
  assert.ok(same("<obj at 0x7f3a12bc90>", "<obj at 0x7f3a99aa10>"));
  assert.ok(same("at 2026-01-02T03:04:05Z", "at 2026-12-03T08:09:10Z"));
  assert.ok(!same("Ran 2 tests in 0.003s", "Ran 3 tests in 0.003s"));
  assert.ok(!same("FAILED (failures=1)", "OK"));
});

Deno.test("firstDifference names the first differing line with context", () => {
  const d = firstDifference("a\nb\nc\n", "a\nb\nX\n");
  assert.deepEqual(d, { line: 3, context: "b", recorded: "c", replayed: "X" });
  const shorter = firstDifference("a\nb", "a");
  assert.deepEqual(shorter, { line: 2, context: "a", recorded: "b", replayed: null });
});

const UNITTEST = [
  "import random, time, unittest, calc",
  "class T(unittest.TestCase):",
  "    def test_add(self):",
  "        time.sleep(random.random() / 20)",
  "        self.assertEqual(calc.add(2, 3), 5)",
  "    def test_zero(self):",
  "        self.assertEqual(calc.add(0, 0), 0)",
  "",
].join("\n");

Deno.test("a run replayed right after recording matches despite timings, temp paths and pids", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const testing = `cd ${repo} && echo pid $$ && mktemp -d && python3 -m unittest test_calc 2>&1`;
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "create",
      path: `${repo}/test_calc.py`,
      file_text: UNITTEST,
    }]]),
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "return a - b",
      new_str: "return a + b",
    }]]),
    chatToolCalls([["bash", { command: testing }]]),
    chatToolCalls([["task_done", {}]], "fixed"),
  ]);
  const traj = `${home}/rec.json`;
  try {
    await record(mock, "fix add", repo, home, traj);
  } finally {
    await mock.close();
  }
  const recorded = JSON.parse(await Deno.readTextFile(traj));
  assert.match(recorded.agent_steps[2].tool_results[0].result, /Ran 2 tests in \d\.\d+s/);

  await resetRepo(repo);
  const same = await runDeft(["run", "--replay", traj, "-w", repo, "--json"], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(same.code, 0, same.stderr);
  assert.deepEqual(JSON.parse(same.stdout).divergences, []);
  assert.match(same.stderr, /every tool result matches/);

  // Byte for byte, a volatile line differs (the shell runs in its own PID namespace, so `$$` may
  // repeat; the mktemp path never does), and the report shows both sides of it.
  await resetRepo(repo);
  const exact = await runDeft(["run", "--replay", traj, "-w", repo, "--replay-exact"], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(exact.code, 1, exact.stderr);
  assert.match(exact.stderr, /step 3: bash \(\S+\) result differs at line \d+:/);
  assert.match(
    exact.stderr,
    /\n {4}- (pid \d+|\/tmp\/tmp\.\w+)\n {4}\+ (pid \d+|\/tmp\/tmp\.\w+)\n/,
  );
});

Deno.test("a real behaviour change is still a divergence, shown by its first differing line", async () => {
  const repo = await makeBuggyRepo();
  await using homeTemp = await tempDir("deft-home-");
  const home = homeTemp.path;
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: `cd ${repo} && printf 'one\\ntwo\\n' && cat calc.py` }]]),
    chatToolCalls([["task_done", {}]], "done"),
  ]);
  const traj = `${home}/rec.json`;
  try {
    await record(mock, "look", repo, home, traj);
  } finally {
    await mock.close();
  }
  await Deno.writeTextFile(`${repo}/calc.py`, "def add(a, b):\n    return a * b\n");
  const replay = await runDeft(["run", "--replay", traj, "-w", repo], {
    cwd: home,
    env: { HOME: home },
  });
  assert.equal(replay.code, 1, replay.stderr);
  assert.match(replay.stderr, /result differs at line 4:\n {6}def add\(a, b\):\n/);
  assert.match(replay.stderr, /\n {4}- {5}return a - b\n {4}\+ {5}return a \* b\n/);
});
