/**
 * Attacks on a checkpoint's restore (src/agent/patch.ts through src/agent/checkpoints.ts): between
 * the checkpoint and the rewind, a background process of the model's swaps a folder of the
 * workspace for a link to a folder outside, or a file for a FIFO. The restore writes inside the
 * workspace only, never through the link, and never blocks on the FIFO.
 */
import assert from "node:assert/strict";
import { git } from "../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import {
  checkpointHostPlace,
  recordCheckpointIn,
  restoreCheckpointIn,
} from "../../../src/agent/checkpoint_tree.ts";
import { CheckpointError, rewind } from "../../../src/agent/checkpoints.ts";
import type { Trajectory } from "../../../src/trajectory/recorder.ts";

async function repoWithSub(): Promise<string> {
  const dir = await tempDirUntilExit("deft-ckpt-hostile-");
  await Deno.mkdir(`${dir}/sub`);
  await Deno.writeTextFile(`${dir}/sub/a.txt`, "one\n");
  await Deno.writeTextFile(`${dir}/plain.txt`, "one\n");
  await git(dir, "init", "-q");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".");
  await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init");
  return dir;
}

Deno.test("rewind: a folder swapped for a link to outside after the last checkpoint is never written through", async () => {
  const repo = await repoWithSub();
  await using store = await tempDir("deft-ckpt-store-");
  await using outside = await tempDir("deft-victim-");
  await Deno.writeTextFile(`${outside.path}/a.txt`, "victim\n");
  await Deno.mkdir(`${store.path}/objects`);
  const place = await checkpointHostPlace(repo, store.path);
  const first = await recordCheckpointIn(place, store.path);
  await Deno.writeTextFile(`${repo}/sub/a.txt`, "two\n");
  const second = await recordCheckpointIn(place, store.path);
  // The race: after the checkpoint taken before the rewind, `sub` becomes a link outside.
  await Deno.remove(`${repo}/sub`, { recursive: true });
  await Deno.symlink(outside.path, `${repo}/sub`);
  await restoreCheckpointIn(place, store.path, second.tree, first.tree).catch(() => {});
  assert.equal(await Deno.readTextFile(`${outside.path}/a.txt`), "victim\n", "written through");
  assert.deepEqual(
    [...Deno.readDirSync(outside.path)].map((e) => e.name),
    ["a.txt"],
    "nothing created outside",
  );
});

Deno.test("rewind: a file turned into a FIFO after the last checkpoint is replaced, never opened", async () => {
  const repo = await repoWithSub();
  await using store = await tempDir("deft-ckpt-store-");
  await Deno.mkdir(`${store.path}/objects`);
  const place = await checkpointHostPlace(repo, store.path);
  const first = await recordCheckpointIn(place, store.path);
  await Deno.writeTextFile(`${repo}/plain.txt`, "two\n");
  const second = await recordCheckpointIn(place, store.path);
  await Deno.remove(`${repo}/plain.txt`);
  const made = await new Deno.Command("mkfifo", { args: [`${repo}/plain.txt`] }).output();
  assert.ok(made.success);
  let released = false;
  const release = setTimeout(() => {
    released = true;
    Deno.open(`${repo}/plain.txt`, { write: true }).then((f) => f.close(), () => {});
  }, 20_000);
  const outcome = await restoreCheckpointIn(place, store.path, second.tree, first.tree).then(
    () => "restored",
    (e) => `refused: ${e.message}`,
  );
  clearTimeout(release);
  assert.ok(!released, "the restore blocked on the FIFO");
  const info = await Deno.lstat(`${repo}/plain.txt`);
  if (outcome === "restored") {
    assert.ok(info.isFile);
    assert.equal(await Deno.readTextFile(`${repo}/plain.txt`), "one\n");
  } else {
    assert.ok(info.isFifo, outcome);
  }
});

/**
 * Git config planted where a first look at `.git/config` does not show it: an `include.path`, a
 * conditional include, a per-worktree config, and a `.git` file pointing at a git dir elsewhere.
 */
const SNEAKY_PLANTS: [string, (markers: string) => string][] = [
  [
    "include.path",
    (m) =>
      `git config -f .git/extra.cfg filter.sneaky.clean "sh -c 'touch ${m}/inc-clean; cat'" && git config -f .git/extra.cfg filter.sneaky.smudge "sh -c 'touch ${m}/inc-smudge; cat'" && git config -f .git/extra.cfg core.fsmonitor "sh -c 'touch ${m}/inc-fsmonitor'" && git config include.path extra.cfg && printf '* filter=sneaky\\n' > .gitattributes`,
  ],
  [
    "includeIf gitdir",
    (m) =>
      `git config -f .git/if.cfg filter.sneaky.clean "sh -c 'touch ${m}/if-clean; cat'" && git config -f .git/if.cfg filter.sneaky.smudge "sh -c 'touch ${m}/if-smudge; cat'" && git config -f .git/if.cfg core.fsmonitor "sh -c 'touch ${m}/if-fsmonitor'" && git config "includeIf.gitdir:/.path" "$PWD/.git/if.cfg" && printf '* filter=sneaky\\n' > .gitattributes`,
  ],
  [
    "config.worktree",
    (m) =>
      `git config extensions.worktreeConfig true && git config --worktree filter.sneaky.clean "sh -c 'touch ${m}/wt-clean; cat'" && git config --worktree filter.sneaky.smudge "sh -c 'touch ${m}/wt-smudge; cat'" && git config --worktree core.fsmonitor "sh -c 'touch ${m}/wt-fsmonitor'" && printf '* filter=sneaky\\n' > .gitattributes`,
  ],
  [
    "a .git file (gitdir: elsewhere)",
    (m) =>
      `mv .git ../$(basename $PWD).realgit && printf 'gitdir: ../%s.realgit\\n' "$(basename $PWD)" > .git && git config filter.sneaky.clean "sh -c 'touch ${m}/gd-clean; cat'" && git config filter.sneaky.smudge "sh -c 'touch ${m}/gd-smudge; cat'" && git config core.fsmonitor "sh -c 'touch ${m}/gd-fsmonitor'" && printf '* filter=sneaky\\n' > .gitattributes`,
  ],
];

for (const [where, plant] of SNEAKY_PLANTS) {
  Deno.test(`checkpoints: git config planted through ${where} runs nothing while one is taken and restored`, async () => {
    const repo = await repoWithSub();
    await using markers = await tempDir("deft-markers-");
    await using store = await tempDir("deft-ckpt-store-");
    const planted = await new Deno.Command("sh", { args: ["-c", plant(markers.path)], cwd: repo })
      .output();
    assert.ok(planted.success, new TextDecoder().decode(planted.stderr));
    await Deno.mkdir(`${store.path}/objects`);
    const place = await checkpointHostPlace(repo, store.path);
    const first = await recordCheckpointIn(place, store.path);
    await Deno.writeTextFile(`${repo}/plain.txt`, "two\n");
    await Deno.writeTextFile(`${repo}/new.txt`, "new\n");
    const second = await recordCheckpointIn(place, store.path);
    await restoreCheckpointIn(place, store.path, second.tree, first.tree);
    assert.equal(await Deno.readTextFile(`${repo}/plain.txt`), "one\n");
    const ran: string[] = [];
    for await (const e of Deno.readDir(markers.path)) ran.push(e.name);
    assert.deepEqual(ran, [], "a planted program ran");
  });
}

Deno.test("rewind: a checkpoint whose trees differ outside the workspace (a folder of the repository) is refused, nothing written", async () => {
  const repo = await repoWithSub();
  await using store = await tempDir("deft-ckpt-store-");
  await Deno.mkdir(`${store.path}/objects`);
  // Checkpoints taken at the repository's top: `plain.txt` is outside the workspace `sub`.
  const top = await checkpointHostPlace(repo, store.path);
  const first = await recordCheckpointIn(top, store.path);
  await Deno.writeTextFile(`${repo}/plain.txt`, "two\n");
  await Deno.writeTextFile(`${repo}/sub/a.txt`, "two\n");
  const second = await recordCheckpointIn(top, store.path);
  const record = (id: number, tree: string) => ({
    id,
    turn: id - 1,
    kind: "turn",
    label: "t",
    time: new Date().toISOString(),
    tree,
    conversation: [],
    interactions: 0,
    files_changed: 0,
    store: store.path,
    ms: 0,
  });
  const data = {
    llm_interactions: [],
    agent_steps: [],
    checkpoints: [record(1, first.tree), record(2, second.tree)],
  } as unknown as Trajectory;
  const place = await checkpointHostPlace(`${repo}/sub`, store.path);
  await assert.rejects(
    rewind({ place, store: store.path }, data, { to: 1, files: true, conversation: false }),
    (e: Error) => {
      assert.ok(e instanceof CheckpointError, `${e.name}: ${e.message}`);
      assert.match(e.message, /outside this workspace \("plain\.txt"\)/);
      return true;
    },
  );
  assert.equal(await Deno.readTextFile(`${repo}/plain.txt`), "two\n");
  assert.equal(await Deno.readTextFile(`${repo}/sub/a.txt`), "two\n");
});
