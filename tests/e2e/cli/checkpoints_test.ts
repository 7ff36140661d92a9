import assert from "node:assert/strict";
import { interactiveOnStdin, runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { makeBuggyRepo } from "../../helpers/repo.ts";
import { tempDirUntilExit } from "../../helpers/temp.ts";
import { mockModelArgs as modelArgs } from "../../helpers/mock_session.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

/** A completed `deft run` that fixed calc.py: its workspace, env and session. */
async function completedSession() {
  const repo = await makeBuggyRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["str_replace_based_edit_tool", {
      command: "str_replace",
      path: `${repo}/calc.py`,
      old_str: "a - b",
      new_str: "a + b",
    }]]),
    chatToolCalls([["task_done", {}]]),
  ]);
  try {
    const r = await runDeft(["run", "fix calc", "-w", repo, "--json", ...modelArgs(mock)], {
      cwd: h,
      env,
    });
    assert.equal(r.code, 0, r.stderr);
    const path: string = JSON.parse(r.stdout).trajectory;
    const t = JSON.parse(await Deno.readTextFile(path));
    assert.ok(t.checkpoints?.length >= 2, "a start and a turn checkpoint");
    const store = `${h}/state/deft/checkpoints/${t.session_id}`;
    assert.ok(await exists(`${store}/objects`), "the store is where the docs say");
    return { repo, h, env, path, id: t.session_id as string, store };
  } finally {
    await mock.close();
  }
}

Deno.test("rewind-to: a completed session is refused before any file or record changes", async () => {
  const { repo, h, env, path } = await completedSession();
  const fixed = await Deno.readTextFile(`${repo}/calc.py`);
  assert.match(fixed, /a \+ b/);
  const r = await runDeft(
    ["run", "--continue", "--rewind-to", "0", "-w", repo, "-p", "openai_compatible", "-m", "x"],
    { cwd: h, env },
  );
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /completed its task; give the next one/);
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), fixed, "the files are untouched");
  const t = JSON.parse(await Deno.readTextFile(path));
  assert.equal(t.rewinds, undefined, "no rewind was recorded");
  assert.ok(t.checkpoints.every((c: Json) => c.kind !== "rewind"), "no before-rewind checkpoint");
});

Deno.test("checkpoints rm: the store goes, the conversation stays; a linked store is refused", async () => {
  const { repo, h, env, path, id, store } = await completedSession();
  // A store replaced by a link to another folder: nothing there is followed or removed.
  const victim = await tempDirUntilExit("deft-victim-");
  await Deno.writeTextFile(`${victim}/keep.txt`, "keep");
  await Deno.rename(store, `${store}.real`);
  await Deno.symlink(victim, store);
  const refused = await runDeft(["checkpoints", "rm", id, "-w", repo], { cwd: h, env });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /is a symlink, not a checkpoint store Deft made: left alone/);
  assert.equal(await Deno.readTextFile(`${victim}/keep.txt`), "keep");
  assert.ok(await exists(store), "the link itself is left too");
  await Deno.remove(store);
  await Deno.rename(`${store}.real`, store);

  // A planted link inside the store goes with it; its target stays.
  await Deno.symlink(victim, `${store}/planted`);
  const rm = await runDeft(["checkpoints", "rm", id, "-w", repo], { cwd: h, env });
  assert.equal(rm.code, 0, rm.stderr);
  assert.match(rm.stderr, /removed the checkpoints of session/);
  assert.equal(await exists(store), false);
  assert.equal(await Deno.readTextFile(`${victim}/keep.txt`), "keep");
  assert.ok(await exists(path), "the trajectory stays");

  const files = await runDeft(["rewind", id, "-w", repo, "--to", "0", "--files"], {
    cwd: h,
    env,
  });
  assert.equal(files.code, 2, files.stderr);
  assert.match(files.stderr, /checkpoints of session \S+ were removed/);
  assert.match(await Deno.readTextFile(`${repo}/calc.py`), /a \+ b/);
  assert.equal(await exists(store), false, "a refused rewind makes no empty store");

  const bad = await runDeft(["checkpoints", "rm", "../../victim", "-w", repo], { cwd: h, env });
  assert.equal(bad.code, 2, bad.stderr);
});

Deno.test("sessions rm removes the trajectory and the checkpoints; --prune and a new session sweep stores of gone sessions", async () => {
  const { repo, h, env, path, id, store } = await completedSession();
  const root = `${h}/state/deft/checkpoints`;
  const victim = await tempDirUntilExit("deft-victim-");
  await Deno.writeTextFile(`${victim}/keep.txt`, "keep");
  // Stores of sessions that are gone: one old, one young; a link named like a store.
  const old = `${root}/20200101_000000_aaaaaa`;
  const young = `${root}/20200101_000000_bbbbbb`;
  for (const dir of [old, young]) {
    await Deno.mkdir(`${dir}/objects`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/session.json`,
      JSON.stringify({ trajectory: `${h}/gone.json` }),
    );
  }
  await Deno.utime(old, new Date(2020, 0, 1), new Date(2020, 0, 1));
  await Deno.symlink(victim, `${root}/20200101_000000_cccccc`);

  // A new session's store sweeps the old orphan only.
  const mock = MockLLM.start([chatToolCalls([["task_done", {}]])]);
  try {
    const r = await runDeft(["run", "nothing", "-w", repo, ...modelArgs(mock)], { cwd: h, env });
    assert.equal(r.code, 0, r.stderr);
  } finally {
    await mock.close();
  }
  assert.equal(await exists(old), false, "the old store of a gone session is swept");
  assert.ok(await exists(young), "a young one is left (its session may be starting)");
  assert.ok(await exists(store), "a live session's store stays");

  const rm = await runDeft(["sessions", "rm", id, "-w", repo], { cwd: h, env });
  assert.equal(rm.code, 0, rm.stderr);
  assert.match(rm.stderr, /removed session \S+ .* and its checkpoints/);
  assert.equal(await exists(path), false);
  assert.equal(await exists(store), false);
  const listed = await runDeft(["sessions", "-w", repo, "--json"], { cwd: h, env });
  assert.ok(!listed.stdout.includes(id), "gone from the list");
  const again = await runDeft(["sessions", "rm", id, "-w", repo], { cwd: h, env });
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /no session/);

  const prune = await runDeft(["checkpoints", "--prune"], { cwd: h, env });
  assert.equal(prune.code, 0, prune.stderr);
  assert.match(prune.stderr, /removed the checkpoints of 1 session/);
  assert.equal(await exists(young), false, "--prune takes young orphans too");
  assert.ok(await exists(`${root}/20200101_000000_cccccc`), "the link is left alone");
  assert.equal(await Deno.readTextFile(`${victim}/keep.txt`), "keep");
});

Deno.test("a container session named outright: listed, its conversation cut from the host, its files refused saying where they are", async () => {
  const { repo, h, env, path } = await completedSession();
  const id = "20200101_000000_ctnr01";
  const box = "a".repeat(64);
  const t = JSON.parse(await Deno.readTextFile(path));
  const copy = `${h}/state/deft/trajectories/trajectory_${id}.json`;
  await Deno.writeTextFile(
    copy,
    JSON.stringify({
      ...t,
      session_id: id,
      working_dir: "/testbed",
      container: { runtime: "podman", image: "img", id: box },
    }),
  );
  const fixed = await Deno.readTextFile(`${repo}/calc.py`);
  const listed = await runDeft(["checkpoints", id, "-w", repo, "--json"], { cwd: h, env });
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(JSON.parse(listed.stdout).checkpoints.length, t.checkpoints.length);
  const files = await runDeft(["rewind", id, "--to", "0", "-w", repo], { cwd: h, env });
  assert.equal(files.code, 2, files.stderr);
  assert.match(files.stderr, /recorded in the container a{12}, and its checkpoints are kept/);
  assert.match(files.stderr, /--docker-container-id a{12}/);
  const talk = await runDeft(["rewind", id, "--to", "0", "--conversation", "-w", repo], {
    cwd: h,
    env,
  });
  assert.equal(talk.code, 0, talk.stderr);
  assert.equal(JSON.parse(await Deno.readTextFile(copy)).rewinds.length, 1);
  assert.equal(await Deno.readTextFile(`${repo}/calc.py`), fixed, "no host file touched");
});

Deno.test("checkpoints: after two rewinds every state keeps its own number, and the state the session left is named by its", async () => {
  const repo = await makeBuggyRepo();
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["bash", { command: "echo one > f.txt" }]]),
    chatText("done one"),
    chatToolCalls([["bash", { command: "echo two > f.txt" }]]),
    chatText("done two"),
  ]);
  try {
    const session = await interactiveOnStdin(repo, mock, "first\nsecond\n", {
      args: ["--approval", "never"],
      cwd: h,
      env,
    });
    assert.equal(session.code, 0, session.stderr);
    assert.equal(await Deno.readTextFile(`${repo}/f.txt`), "two\n");
    for (const to of ["0", "1"]) {
      const back = await runDeft(["rewind", "-w", repo, "--to", to], { cwd: h, env });
      assert.equal(back.code, 0, back.stderr);
    }
    assert.equal(await Deno.readTextFile(`${repo}/f.txt`), "one\n");
    const listed = await runDeft(["checkpoints", "-w", repo], { cwd: h, env });
    assert.equal(listed.code, 0, listed.stderr);
    const [header, ...rows] = listed.stdout.trimEnd().split("\n");
    assert.match(header, /^#\s+TIME \(UTC\)\s+FILES\s+LABEL$/, "one column names a checkpoint");
    assert.deepEqual(rows.map((r) => r.split(/\s+/)[0]), ["0", "1", "2", "3", "4"]);
    assert.match(rows[3], /before the rewind to checkpoint 0$/);
    assert.match(rows[4], /before the rewind to checkpoint 1$/);
    // The state the session left, after its second turn, is still checkpoint 2.
    const original = await runDeft(["rewind", "-w", repo, "--to", "2"], { cwd: h, env });
    assert.equal(original.code, 0, original.stderr);
    assert.match(original.stderr, /to checkpoint 2 \(second\)/);
    assert.equal(await Deno.readTextFile(`${repo}/f.txt`), "two\n");
    const missing = await runDeft(["rewind", "-w", repo, "--to", "9"], { cwd: h, env });
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /no checkpoint 9 in this session \(there are 0-5; deft checkpoints/,
    );
  } finally {
    await mock.close();
  }
});
