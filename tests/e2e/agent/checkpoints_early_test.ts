/**
 * A sandboxed session's checkpoint store and its sandboxed git started when the session opens
 * (src/agent/checkpoint_early.ts): taken by the session's first trajectory, whose owner record it
 * then holds; started while the session is still loading its tools; and gone with Deft on every
 * way out — a Ctrl-C before the first checkpoint, a config error after the start, a session that
 * goes on under another id.
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { deftFlags } from "../../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT, runMocked, trustedHomeWith } from "../../helpers/deft.ts";
import { mockModelArgs } from "../../helpers/mock_session.ts";
import { chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { checkpointTrajectory, stateDirOfItsOwn } from "../../helpers/checkpoints.ts";
import {
  hostCheckpointPlace,
  startCheckpointsEarly,
  takeCheckpoint,
} from "../../../src/agent/checkpoints.ts";
import { gitSandbox } from "../../../src/policy/git.ts";

const SANDBOX = ["--sandbox", "workspace-write"];

/** A home of its own whose every Deft folder (state, config, temp) is inside it. */
function homeEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_STATE_HOME: `${home}/state`,
    XDG_CONFIG_HOME: `${home}/.config`,
    // The sandboxed git's own folders too: a runner left behind would name the home.
    TMPDIR: `${home}/tmp`,
  };
}

async function stores(home: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(`${home}/state/deft/checkpoints`)) {
      names.push(entry.name);
    }
  } catch { /* no checkpoints folder */ }
  return names;
}

/** The processes (pid and command line, as `ps` tells them) whose command line names `text`. */
async function processesNaming(text: string): Promise<string[]> {
  const ps = await new Deno.Command("ps", { args: ["-eww", "-o", "pid=,args="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(ps.stdout).split("\n")
    .filter((line) => line.includes(text) && !line.includes(" ps -eww"));
}

/** Waits (up to `ms`) for `check` to hold; false when it never did. */
async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await check();
}

Deno.test("early checkpoints: a sandboxed run's checkpoints go into the store it made at its opening, which then names the run's trajectory", async () => {
  const repo = await makeBuggyRepo();
  const home = await trustedHomeWith("deft-early-home-", () => "");
  await Deno.mkdir(`${home}/tmp`);
  const trajectory = `${home}/runs/custom.json`;
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await runMocked(mock, "finish", repo, {
      extra: [...SANDBOX, "-t", trajectory],
      cwd: home,
      env: homeEnv(home),
    });
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(await Deno.readTextFile(trajectory));
    assert.ok(data.checkpoints?.length >= 1, "the start checkpoint was taken");
    assert.deepEqual(await stores(home), [data.session_id], "one store: the session's own");
    const owner = JSON.parse(
      await Deno.readTextFile(`${home}/state/deft/checkpoints/${data.session_id}/session.json`),
    );
    // The sweep finds the session by this file: the early one named no trajectory.
    assert.equal(owner.trajectory, resolve(trajectory));
    assert.equal(owner.workspace, repo);
  } finally {
    await mock.close();
  }
});

Deno.test("early checkpoints: Ctrl-C at an interactive session's first prompt, before any checkpoint, leaves no sandboxed git behind", async () => {
  const repo = await makeBuggyRepo();
  const home = await tempDirUntilExit("deft-early-home-");
  await Deno.mkdir(`${home}/tmp`);
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  // Nothing is typed: the session waits at its first prompt, its first checkpoint to come with
  // the first turn.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...deftFlags(),
      `${REPO_ROOT}main.ts`,
      "interactive",
      "-w",
      repo,
      ...SANDBOX,
      "--approval",
      "never",
      ...mockModelArgs(mock),
    ],
    cwd: home,
    env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...homeEnv(home) },
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    // The store's sandbox is up (its bwrap names the store) while no turn has run.
    const started = await until(
      async () =>
        (await stores(home)).length === 1 &&
        (await processesNaming(`${home}/state/deft/checkpoints/`)).some((p) => p.includes("bwrap")),
      30_000,
    );
    assert.ok(started, "the store's sandboxed git started before the first checkpoint");
    assert.equal(mock.requests.length, 0, "no turn ran");
    child.kill("SIGINT");
    await child.stdin.close().catch(() => {});
    await child.status;
    // A Ctrl-C this early ends Deft by the signal: the empty store stays, its owner file naming
    // a process that is gone, for the sweep (as any store of a session that is gone).
    const gone = await until(async () => (await processesNaming(home)).length === 0, 10_000);
    assert.ok(gone, `left behind:\n${(await processesNaming(home)).join("\n")}`);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
    await child.status;
    await child.stdin.close().catch(() => {});
    await stderr;
    await mock.close();
  }
});

Deno.test("early checkpoints: a config error after the session's start leaves no store and no sandboxed git", async () => {
  const repo = await makeBuggyRepo();
  const home = await tempDirUntilExit("deft-early-home-");
  await Deno.mkdir(`${home}/tmp`);
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await runMocked(mock, "finish", repo, {
      extra: [...SANDBOX, "--approval-rules", `${home}/missing.yaml`],
      cwd: home,
      env: homeEnv(home),
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /approval rules file/);
    assert.deepEqual(await stores(home), [], "the store made at the start is gone");
    const gone = await until(async () => (await processesNaming(home)).length === 0, 10_000);
    assert.ok(gone, `left behind:\n${(await processesNaming(home)).join("\n")}`);
  } finally {
    await mock.close();
  }
});

Deno.test("early checkpoints: a store the session does not take (it goes on under another id) is removed; one it took stays", async () => {
  await using _state = await stateDirOfItsOwn("deft-early-state-");
  const repo = await makeBuggyRepo();
  const sandbox = gitSandbox(repo, { sandbox: "workspace-write" });
  const unused = startCheckpointsEarly(repo, sandbox)!;
  const taken = startCheckpointsEarly(repo, sandbox)!;
  await Promise.all([unused.started, taken.started]);
  const root = `${Deno.env.get("XDG_STATE_HOME")}/deft/checkpoints`;
  const exists = (id: string) => Deno.lstat(`${root}/${id}`).then(() => true, () => false);
  assert.ok(await exists(unused.sessionId) && await exists(taken.sessionId));
  const at = await hostCheckpointPlace(repo, taken.sessionId, sandbox, `${repo}/t.json`);
  assert.equal(at.fresh, true, "a store made early is a new one");
  unused.release();
  taken.release();
  assert.equal(await exists(unused.sessionId), false, "the unused store is gone");
  assert.ok(await exists(taken.sessionId), "the taken store stays");
  // Nothing is started without a sandbox.
  assert.equal(startCheckpointsEarly(repo, gitSandbox(repo, { sandbox: "none" })), undefined);
});

Deno.test("early checkpoints: after the early start, a session's first checkpoint and its turns start no sandbox", async () => {
  await using _state = await stateDirOfItsOwn("deft-early-state-");
  await using tmp = await tempDir("deft-early-tmp-");
  const repo = await makeBuggyRepo();
  // The sandboxed git's folders (one `io-` folder per sandbox started) go into a folder of the
  // test's own.
  const before = Deno.env.get("TMPDIR");
  Deno.env.set("TMPDIR", tmp.path);
  try {
    const sandboxes = async () => {
      let n = 0;
      for await (const view of Deno.readDir(tmp.path)) {
        for await (const entry of Deno.readDir(`${tmp.path}/${view.name}`)) {
          if (entry.name.startsWith("io-")) n++;
        }
      }
      return n;
    };
    const sandbox = gitSandbox(repo, { sandbox: "workspace-write" });
    const early = startCheckpointsEarly(repo, sandbox)!;
    await early.started;
    const started = await sandboxes();
    assert.ok(started >= 1, "the store's sandbox started early");
    const at = await hostCheckpointPlace(repo, early.sessionId, sandbox, `${repo}/t.json`);
    const data = checkpointTrajectory(early.sessionId);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    for (let turn = 1; turn <= 3; turn++) {
      await Deno.writeTextFile(`${repo}/calc.py`, `# turn ${turn}\n`);
      const record = await takeCheckpoint(at, data, { turn, kind: "turn", label: "turn" });
      assert.equal(record.files_changed, 1);
    }
    assert.equal(await sandboxes(), started, "no sandbox started after the early start");
  } finally {
    if (before === undefined) Deno.env.delete("TMPDIR");
    else Deno.env.set("TMPDIR", before);
  }
});
