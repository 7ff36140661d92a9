/**
 * Finding 12 (issue 28) and the sessions status (issue 29, item 5), from the attacker's side: a
 * planted or damaged trajectory file never takes `deft sessions` down or makes `--resume` crash.
 * Sessions skips it and lists the rest; --resume/--continue refuse it with exit 2, naming the file
 * and the field. A run stopped by Ctrl-C is listed as "interrupted", not "failed".
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";

function trajectory(workspace: string, fields: Record<string, unknown> = {}) {
  return {
    format_version: 1,
    session_id: "20260101_000000_good01",
    task: "the good task",
    working_dir: workspace,
    start_time: "2026-01-01T00:00:00.000Z",
    end_time: "2026-01-01T00:01:00.000Z",
    provider: "openai_compatible",
    model: "m",
    max_steps: 9,
    llm_interactions: [],
    agent_steps: [{
      step_number: 1,
      timestamp: "2026-01-01T00:01:00.000Z",
      state: "interrupted",
      llm_response: null,
      tool_calls: [],
      tool_results: [],
      reflection: null,
      error: "interrupted",
    }],
    success: false,
    final_result: "interrupted",
    execution_time: 60,
    total_usage: {},
    ...fields,
  };
}

async function setup() {
  const home = await tempDirUntilExit("deft-home-");
  const repo = `${home}/repo`;
  await Deno.mkdir(repo);
  const dir = `${home}/state/deft/trajectories`;
  await Deno.mkdir(dir, { recursive: true });
  const env = { HOME: home, XDG_STATE_HOME: `${home}/state` };
  const plant = async (name: string, data: unknown, mtime: number) => {
    await Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(data));
    await Deno.utime(`${dir}/${name}`, mtime, mtime);
  };
  return { home, repo, dir, env, plant };
}

Deno.test("deft sessions skips a planted trajectory and lists the rest; interrupted is not failed", async () => {
  const { home, repo, env, plant } = await setup();
  try {
    await plant("trajectory_good.json", trajectory(repo), 1_000_000);
    await plant(
      "trajectory_bad.json",
      trajectory(repo, { session_id: "bad1", start_time: 5 }),
      2_000_000,
    );
    const r = await runDeft(["sessions", "-w", repo], { cwd: home, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /20260101_000000_good01 .* interrupted +the good task/);
    assert.doesNotMatch(r.stdout, /bad1/);
    const json = await runDeft(["sessions", "-w", repo, "--json"], { cwd: home, env });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).map((s: { outcome: string }) => s.outcome), [
      "interrupted",
    ]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("--resume and --continue refuse a trajectory of the wrong shape: exit 2, the file and the field", async () => {
  const { home, repo, dir, env, plant } = await setup();
  try {
    const bad = trajectory(repo, {
      session_id: "bad2",
      llm_interactions: [{
        timestamp: "t",
        provider: "p",
        model: "m",
        input_messages: 5,
        response: { content: "", tool_calls: [] },
        tools_available: [],
      }],
    });
    await plant("trajectory_bad2.json", bad, 3_000_000);
    const model = [
      "-p",
      "openai_compatible",
      "-m",
      "m",
      "--model-base-url",
      "http://127.0.0.1:9/v1",
    ];
    const resume = await runDeft(
      ["run", "--resume", `${dir}/trajectory_bad2.json`, "-w", repo, "-k", "k", ...model],
      { cwd: home, env },
    );
    assert.equal(resume.code, 2, resume.stderr);
    assert.match(resume.stderr, /trajectory_bad2\.json/);
    assert.match(resume.stderr, /llm_interactions\[0\]\.input_messages/);
    assert.doesNotMatch(resume.stderr, /Spread syntax|iterable/);
    // --continue takes the newest session of the workspace: the same bad file.
    const cont = await runDeft(["run", "--continue", "-w", repo, "-k", "k", ...model], {
      cwd: home,
      env,
    });
    assert.equal(cont.code, 2, cont.stderr);
    assert.match(cont.stderr, /trajectory_bad2\.json.*llm_interactions\[0\]\.input_messages/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an error that echoes a planted name shows it inert", async () => {
  const { home, repo, env } = await setup();
  try {
    const r = await runDeft(["run", "--resume", "x\x1b]0;pwned\x07\u202e", "-w", repo, "-k", "k"], {
      cwd: home,
      env,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /x␛\]0;pwned/);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(r.stderr, /[\x1b\x07\u202e]/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
