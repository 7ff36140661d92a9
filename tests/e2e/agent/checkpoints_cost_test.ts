/**
 * What a turn's checkpoint costs, and the safety of what makes it cheap (src/agent/checkpoints.ts,
 * src/agent/checkpoint_place.ts, src/agent/patch.ts, src/agent/host_place.ts): a handful of git
 * processes and no config listing per call (git reads the store's own config), a session's first
 * in six with its store made without git, no object count while the store is known to be within
 * its bound, one index write that still handles a folder turned into a link, and a walk for
 * special files that reads again every folder changed since.
 */
import assert from "node:assert/strict";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  type CheckpointPlace,
  hostCheckpointPlace,
  removeCheckpointStore,
  rewind,
  takeCheckpoint,
} from "../../../src/agent/checkpoints.ts";
import type { Trajectory } from "../../../src/trajectory/recorder.ts";

function trajectory(id: string): Trajectory {
  return {
    task: "t",
    start_time: new Date().toISOString(),
    end_time: null,
    provider: "none",
    model: "none",
    max_steps: 1,
    llm_interactions: [],
    agent_steps: [],
    success: false,
    final_result: null,
    execution_time: 0,
    total_usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      reasoning_tokens: 0,
    },
    session_id: id,
  };
}

/** Runs `body` with Deft's state dir (and so its checkpoint stores) in a folder of its own. */
async function withState(body: (id: string) => Promise<void>): Promise<void> {
  await using state = await tempDir("deft-ckpt-cost-state-");
  const before = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  const id = `cost_${crypto.randomUUID().slice(0, 8)}`;
  try {
    await body(id);
  } finally {
    await removeCheckpointStore(id).catch(() => {});
    if (before === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", before);
  }
}

async function repo(dir: string): Promise<void> {
  await Deno.mkdir(`${dir}/sub`);
  await Deno.writeTextFile(`${dir}/sub/a.txt`, "one\n");
  await Deno.writeTextFile(`${dir}/plain.txt`, "one\n");
  await git(dir, "init", "-q");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
}

Deno.test("checkpoints: a turn's checkpoint starts a handful of git processes and lists no config", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await using shim = await tempDir("deft-git-shim-");
  await repo(work.path);
  const realGit = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" }).output())
      .stdout,
  ).trim();
  const log = `${shim.path}/calls`;
  await Deno.writeTextFile(
    `${shim.path}/git`,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
  );
  await Deno.chmod(`${shim.path}/git`, 0o755);
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  Deno.env.set("PATH", `${shim.path}:${path}`);
  try {
    await withState(async (id) => {
      const at = await hostCheckpointPlace(work.path, id);
      const data = trajectory(id);
      await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
      await Deno.writeTextFile(`${work.path}/plain.txt`, "two\n");
      await Deno.writeTextFile(log, "");
      const record = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
      assert.equal(record.files_changed, 1);
      const calls = (await Deno.readTextFile(log)).split("\n").filter(Boolean);
      assert.deepEqual(calls.filter((c) => c.includes("config")), [], "config listed");
      assert.ok(calls.length <= 6, `${calls.length} git processes:\n${calls.join("\n")}`);
    });
  } finally {
    Deno.env.set("PATH", path);
  }
});

Deno.test("checkpoints: a session's first checkpoint starts six git processes, and a turn after it no object count", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await using shim = await tempDir("deft-git-shim-");
  await repo(work.path);
  const realGit = new TextDecoder().decode(
    (await new Deno.Command("sh", { args: ["-c", "command -v git"], stdout: "piped" }).output())
      .stdout,
  ).trim();
  const log = `${shim.path}/calls`;
  await Deno.writeTextFile(
    `${shim.path}/git`,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${realGit}' "$@"\n`,
  );
  await Deno.chmod(`${shim.path}/git`, 0o755);
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  Deno.env.set("PATH", `${shim.path}:${path}`);
  const calls = async () => {
    const all = (await Deno.readTextFile(log)).split("\n").filter(Boolean);
    await Deno.writeTextFile(log, "");
    return all;
  };
  try {
    await withState(async (id) => {
      await Deno.writeTextFile(log, "");
      const at = await hostCheckpointPlace(work.path, id);
      const data = trajectory(id);
      await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
      const first = await calls();
      assert.ok(first.length <= 6, `${first.length} git processes:\n${first.join("\n")}`);
      assert.deepEqual(first.filter((c) => /config|count-objects|init|hash-object/.test(c)), []);
      // The second checkpoint counts the store once; the ones after know its bound holds.
      await Deno.writeTextFile(`${work.path}/plain.txt`, "two\n");
      await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
      assert.equal((await calls()).filter((c) => c.includes("count-objects")).length, 1);
      await Deno.writeTextFile(`${work.path}/plain.txt`, "three\n");
      const record = await takeCheckpoint(at, data, { turn: 2, kind: "turn", label: "turn" });
      assert.equal(record.files_changed, 1);
      const turn = await calls();
      assert.ok(turn.length <= 5, `${turn.length} git processes:\n${turn.join("\n")}`);
      assert.deepEqual(turn.filter((c) => /config|count-objects/.test(c)), []);
    });
  } finally {
    Deno.env.set("PATH", path);
  }
});

Deno.test("checkpoints: a tracked file whose folder became a link is checkpointed and rewound", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  await Deno.mkdir(`${work.path}/elsewhere`);
  await Deno.writeTextFile(`${work.path}/elsewhere/b.txt`, "b\n");
  await withState(async (id) => {
    const at: CheckpointPlace = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    // `sub/a.txt` is now beyond a link: update-index refuses it, the checkpoint must not.
    await Deno.remove(`${work.path}/sub`, { recursive: true });
    await Deno.symlink("elsewhere", `${work.path}/sub`);
    const turn = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    assert.equal(turn.files_changed, 2, "sub/a.txt gone and the link sub new");
    await rewind(at, data, { to: 0, files: true, conversation: false });
    assert.ok((await Deno.lstat(`${work.path}/sub`)).isDirectory, "sub is a folder again");
    assert.equal(await Deno.readTextFile(`${work.path}/sub/a.txt`), "one\n");
    await rewind(at, data, { to: 1, files: true, conversation: false });
    assert.equal(await Deno.readLink(`${work.path}/sub`), "elsewhere");
  });
  assert.equal(await Deno.readTextFile(`${work.path}/elsewhere/b.txt`), "b\n");
});

Deno.test("checkpoints: a FIFO .gitignore made in a folder read before, its times set back, still stops the checkpoint", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  const deadline = Deno.env.get("DEFT_GIT_DEADLINE_MS");
  // Were the FIFO missed, git would wait on it until this deadline, and the error would say so.
  Deno.env.set("DEFT_GIT_DEADLINE_MS", "5000");
  try {
    await withState(async (id) => {
      // Folders changed in the last two seconds are read again anyway: let them age first.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const at = await hostCheckpointPlace(work.path, id);
      const data = trajectory(id);
      await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
      await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
      const old = (await Deno.stat(`${work.path}/sub`)).mtime!;
      const made = await new Deno.Command("mkfifo", { args: [`${work.path}/sub/.gitignore`] })
        .output();
      assert.ok(made.success);
      // The model's background process puts the folder's times back as they were.
      await Deno.utime(`${work.path}/sub`, old, old);
      await assert.rejects(
        () => takeCheckpoint(at, data, { turn: 2, kind: "turn", label: "turn" }),
        (e: Error) => e.message.includes(`${work.path}/sub/.gitignore`),
      );
    });
  } finally {
    if (deadline === undefined) Deno.env.delete("DEFT_GIT_DEADLINE_MS");
    else Deno.env.set("DEFT_GIT_DEADLINE_MS", deadline);
  }
});
