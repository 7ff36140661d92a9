/**
 * What a turn's checkpoint costs, and the safety of what makes it cheap (src/agent/checkpoints.ts,
 * src/agent/checkpoint_place.ts, src/agent/patch.ts, src/agent/host_place.ts): the git processes
 * of a session's first checkpoint and of a turn's, counted (one more pass over the files fails
 * them), no config listing per call (git reads the store's own config), the store made without
 * git, no object count while the store is known to be within its bound, one index write that
 * still handles a folder turned into a link, and a walk for special files that reads again every
 * folder changed since.
 */
import assert from "node:assert/strict";
import { git } from "../../helpers/repo.ts";
import { tempDir } from "../../helpers/temp.ts";
import {
  checkpointTrajectory as trajectory,
  commitFiles,
  gitLog,
  withCheckpointState,
} from "../../helpers/checkpoints.ts";
import {
  type CheckpointPlace,
  hostCheckpointPlace,
  rewind,
  takeCheckpoint,
} from "../../../src/agent/checkpoints.ts";
import { MAX_FILE_BYTES } from "../../../src/agent/patch.ts";

const withState = (body: (id: string) => Promise<void>) => withCheckpointState(body, "cost");

async function repo(dir: string): Promise<void> {
  await commitFiles(dir, { "sub/a.txt": "one\n", "plain.txt": "one\n" });
}

let edits = 0;
/**
 * Writes `text` to `path` dated in the past (a minute apart each time): not "racy" to git, which
 * would read a file written in the same second as the index again at every look.
 */
async function edit(path: string, text: string): Promise<void> {
  await Deno.writeTextFile(path, text);
  const at = new Date(Date.now() - 3600_000 + 60_000 * ++edits);
  await Deno.utime(path, at, at);
}

/** The git subcommands of `calls` (command lines as the shim logs them), sorted. */
function subcommands(calls: readonly string[]): string[] {
  return calls.map((call) => {
    const words = call.split(" ");
    let i = 0;
    while (i < words.length && words[i].startsWith("-")) i += words[i] === "-c" ? 2 : 1;
    return words[i];
  }).sort();
}

Deno.test("checkpoints: a session's first checkpoint is five git processes, a turn's five, an unchanged turn's two; no config listed, no object count", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  await using log = await gitLog();
  await withState(async (id) => {
    const at = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    // As `git add -A && git write-tree` into a new index: the listing (HEAD's tree stands for
    // the index, never read into it first), one index write, the tree; before them, what the
    // repository is and that the store's attributes are in force.
    assert.deepEqual(
      subcommands(await log.take()),
      ["check-attr", "ls-files", "rev-parse", "update-index", "write-tree"],
    );
    // The second checkpoint counts the store once; the ones after know its bound holds.
    await edit(`${work.path}/plain.txt`, "two\n");
    await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    assert.equal((await log.take()).filter((c) => c.includes("count-objects")).length, 1);
    await edit(`${work.path}/plain.txt`, "three\n");
    const record = await takeCheckpoint(at, data, { turn: 2, kind: "turn", label: "turn" });
    assert.equal(record.files_changed, 1);
    // The changed tracked files and the new ones (side by side), one index write, the tree and
    // what changed since the last (side by side).
    assert.deepEqual(
      subcommands(await log.take()),
      ["diff-files", "diff-index", "ls-files", "update-index", "write-tree"],
    );
    // Nothing changed: the two listings, and the index is the last checkpoint's tree.
    const same = await takeCheckpoint(at, data, { turn: 3, kind: "turn", label: "turn" });
    assert.equal(same.files_changed, 0);
    assert.equal(same.tree, record.tree);
    assert.deepEqual(subcommands(await log.take()), ["diff-files", "ls-files"]);
  });
});

Deno.test("checkpoints: an unchanged turn after a rewind, or after the store's index was written by another process, still asks git for its tree", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  await withState(async (id) => {
    const at = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    const start = await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    await edit(`${work.path}/plain.txt`, "two\n");
    await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    await rewind(at, data, { to: 0, files: true, conversation: false });
    const after = await takeCheckpoint(at, data, { turn: 2, kind: "turn", label: "turn" });
    assert.equal(after.tree, start.tree, "the files are the start's again");
    // Another Deft (a rewind from the command line) opens the same store and writes its index.
    await edit(`${work.path}/plain.txt`, "three\n");
    const other = await hostCheckpointPlace(work.path, id);
    const otherData = structuredClone(data);
    const theirs = await takeCheckpoint(other, otherData, { turn: 3, kind: "turn", label: "t" });
    const ours = await takeCheckpoint(at, data, { turn: 3, kind: "turn", label: "turn" });
    assert.equal(ours.tree, theirs.tree, "the tree of the files as they are now");
    assert.notEqual(ours.tree, start.tree);
    assert.equal(ours.files_changed, 1);
  });
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

Deno.test("checkpoints: a session's first checkpoint where a tracked file's folder is already a link holds every other file, and rewinds to them", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  await Deno.mkdir(`${work.path}/elsewhere`);
  await Deno.writeTextFile(`${work.path}/elsewhere/b.txt`, "b\n");
  await Deno.remove(`${work.path}/sub`, { recursive: true });
  await Deno.symlink("elsewhere", `${work.path}/sub`);
  await withState(async (id) => {
    const at = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    await Deno.writeTextFile(`${work.path}/plain.txt`, "two\n");
    await Deno.remove(`${work.path}/sub`);
    const turn = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    assert.equal(turn.files_changed, 2, "plain.txt changed, the link sub gone");
    await rewind(at, data, { to: 0, files: true, conversation: false });
    assert.equal(await Deno.readTextFile(`${work.path}/plain.txt`), "one\n");
    assert.equal(await Deno.readLink(`${work.path}/sub`), "elsewhere");
    assert.equal(await Deno.readTextFile(`${work.path}/elsewhere/b.txt`), "b\n");
  });
});

Deno.test("checkpoints: a session's first checkpoint keeps HEAD's version of a tracked file too large to read", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await commitFiles(work.path, { "big.bin": "small at first\n", "plain.txt": "one\n" });
  // Now past MAX_FILE_BYTES (sparse: nothing is written but its size).
  using file = await Deno.open(`${work.path}/big.bin`, { write: true });
  await file.truncate(MAX_FILE_BYTES + 1);
  const head = await git(work.path, "rev-parse", "HEAD^{tree}");
  await withState(async (id) => {
    const at = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    const start = await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    assert.deepEqual(start.left_out, ["big.bin"]);
    assert.equal(start.tree, head, "the tree of HEAD: nothing else changed");
    await Deno.writeTextFile(`${work.path}/plain.txt`, "two\n");
    const turn = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    assert.equal(turn.files_changed, 1, "plain.txt alone");
  });
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

Deno.test("checkpoints: a FIFO .gitattributes at the top stops the first checkpoint, naming it, and once it is gone the next one is taken", async () => {
  await using work = await tempDir("deft-ckpt-cost-");
  await repo(work.path);
  const made = await new Deno.Command("mkfifo", { args: [`${work.path}/.gitattributes`] })
    .output();
  assert.ok(made.success);
  const deadline = Deno.env.get("DEFT_GIT_DEADLINE_MS");
  // Were the FIFO opened by any git (the check of the store's attributes included), that git
  // would wait on it until this deadline, and the checkpoint after with it.
  Deno.env.set("DEFT_GIT_DEADLINE_MS", "30000");
  try {
    await withState(async (id) => {
      const at = await hostCheckpointPlace(work.path, id);
      const data = trajectory(id);
      await assert.rejects(
        () => takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" }),
        (e: Error) => e.message.includes(`${work.path}/.gitattributes`),
      );
      await Deno.remove(`${work.path}/.gitattributes`);
      const started = Date.now();
      const record = await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
      assert.equal(record.id, 0);
      assert.ok(Date.now() - started < 20_000, "the checkpoint waited on a git stuck on the FIFO");
    });
  } finally {
    if (deadline === undefined) Deno.env.delete("DEFT_GIT_DEADLINE_MS");
    else Deno.env.set("DEFT_GIT_DEADLINE_MS", deadline);
  }
});
