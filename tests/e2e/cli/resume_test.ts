import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { mockModelArgs as modelArgs, sessionHome as home } from "../../helpers/mock_session.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

Deno.test("run --continue after the step limit: the earlier messages go first; the trajectories link", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo first-output" }]]),
    chatToolCalls([["bash", { command: "echo second-output" }]]),
  ]);
  try {
    const first = await runDeft(
      ["run", "count things", "-w", repo, "--max-steps", "2", "--json", ...modelArgs(mock)],
      { cwd: h, env },
    );
    assert.equal(first.code, 1, first.stderr);
    const firstSummary = JSON.parse(first.stdout);

    mock.push(chatToolCalls([["task_done", {}]]));
    const resumed = await runDeft(["run", "--continue", "-w", repo, "--json", ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    const sent: Json[] = mock.requests[2].body.messages;
    assert.deepEqual(sent.map((m) => m.role), [
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "user",
    ]);
    assert.match(sent[1].content, /count things/);
    assert.match(sent[3].content, /first-output/);
    assert.match(sent[5].content, /second-output/);
    assert.match(sent[6].content, /resumed.*Go on with the task/s);

    const summary = JSON.parse(resumed.stdout);
    const t = JSON.parse(await Deno.readTextFile(summary.trajectory));
    assert.equal(t.format_version, 1);
    assert.equal(t.task, "count things", "the resumed run keeps the task's name");
    assert.deepEqual(t.resumed_from, {
      session_id: firstSummary.session_id,
      path: firstSummary.trajectory,
    });
    assert.equal(t.session_id, summary.session_id);

    const list = await runDeft(["sessions", "-w", repo, "--json"], { cwd: h, env });
    assert.equal(list.code, 0, list.stderr);
    const sessions = JSON.parse(list.stdout);
    assert.deepEqual(sessions.map((s: Json) => [s.id, s.outcome, s.task]), [
      [summary.session_id, "completed", "count things"],
      [firstSummary.session_id, "failed", "count things"],
    ]);
    const table = await runDeft(["sessions", "-w", repo], { cwd: h, env });
    assert.match(
      table.stdout,
      new RegExp(`${firstSummary.session_id}.*2\\s+failed\\s+count things`),
    );

    const nothingLeft = await runDeft(["run", "--continue", "-w", repo, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(nothingLeft.code, 2);
    assert.match(nothingLeft.stderr, /completed its task; give the next one/);

    // --resume ID with a new task: it follows the rebuilt conversation.
    mock.push(chatToolCalls([["task_done", {}]]));
    const byId = await runDeft(
      ["run", "now say hi", "--resume", firstSummary.session_id, "-w", repo, ...modelArgs(mock)],
      { cwd: h, env },
    );
    assert.equal(byId.code, 0, byId.stderr);
    const third: Json[] = mock.requests[3].body.messages;
    assert.equal(third.length, 7);
    assert.equal(third.at(-1).content, "now say hi");
  } finally {
    await mock.close();
  }
});

Deno.test("resume refuses another workspace's session, an older format, and a missing one", async () => {
  const repo = await makeBuggyRepo();
  const other = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const traj = `${h}/t.json`;
    const ran = await runDeft(["run", "x", "-w", repo, "-t", traj, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(ran.code, 0, ran.stderr);
    const elsewhere = await runDeft(["run", "--resume", traj, "-w", other, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(elsewhere.code, 2);
    assert.match(elsewhere.stderr, /recorded in .*deft-repo-.*not in this workspace/);

    const t = JSON.parse(await Deno.readTextFile(traj));
    delete t.format_version;
    await Deno.writeTextFile(`${h}/old.json`, JSON.stringify(t));
    const old = await runDeft(
      ["run", "--resume", `${h}/old.json`, "-w", repo, ...modelArgs(mock)],
      {
        cwd: h,
        env,
      },
    );
    assert.equal(old.code, 2);
    assert.match(old.stderr, /older Deft .*format_version/);

    const missing = await runDeft(["run", "--resume", "nope_123", "-w", repo, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no session 'nope_123'.*deft sessions/);

    const none = await runDeft(["run", "--continue", "-w", other, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--continue: no earlier session in/);
    assert.equal(mock.requests.length, 1, "no refused resume reached the model");
  } finally {
    await mock.close();
  }
});

Deno.test("run --approval commands without a terminal fails at start", async () => {
  const repo = await makeBuggyRepo();
  const { home: h, env } = await home();
  const mock = MockLLM.start([]);
  try {
    const r = await runDeft(
      ["run", "x", "-w", repo, "--approval", "commands", ...modelArgs(mock)],
      {
        cwd: h,
        env,
      },
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /approval mode 'commands'.*not a terminal.*--approval never/s);
    // From the user's own config: a repository's untrusted ./deft.yaml may not set approvals.
    await Deno.mkdir(`${h}/.config/deft`, { recursive: true });
    await Deno.writeTextFile(`${h}/.config/deft/config.yaml`, "approval: all\n");
    const fromConfig = await runDeft(["run", "x", "-w", repo, ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(fromConfig.code, 2);
    assert.match(fromConfig.stderr, /approval mode 'all'/);
    assert.equal(mock.requests.length, 0);
  } finally {
    await mock.close();
  }
});
