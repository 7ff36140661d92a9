/**
 * The sweep of checkpoint stores (src/agent/checkpoints.ts) against races and planted stores: a
 * `deft checkpoints --prune` while a session is starting (its store made, its trajectory not yet
 * written) must not take that live session's store; a store naming a dead owner still goes; a
 * planted link is never followed.
 */
import assert from "node:assert/strict";
import { sweepCheckpointStores } from "../../src/agent/checkpoints.ts";
import { tempDir } from "../helpers/temp.ts";

async function withState<T>(run: (root: string) => Promise<T>): Promise<T> {
  await using state = await tempDir("deft-state-");
  const before = Deno.env.get("XDG_STATE_HOME");
  Deno.env.set("XDG_STATE_HOME", state.path);
  try {
    const root = `${state.path}/deft/checkpoints`;
    await Deno.mkdir(root, { recursive: true });
    return await run(root);
  } finally {
    if (before === undefined) Deno.env.delete("XDG_STATE_HOME");
    else Deno.env.set("XDG_STATE_HOME", before);
  }
}

async function store(root: string, id: string, owner: Record<string, unknown>): Promise<string> {
  const dir = `${root}/${id}`;
  await Deno.mkdir(`${dir}/objects`, { recursive: true });
  await Deno.writeTextFile(`${dir}/session.json`, JSON.stringify(owner));
  return dir;
}

Deno.test("sweep: --prune leaves the store of a session still starting (its process alive, no trajectory yet)", async () => {
  await withState(async (root) => {
    const live = await store(root, "20260101_000000_live01", {
      trajectory: `${root}/../not-written-yet.json`,
      pid: Deno.pid,
    });
    // Another Deft's session (pid 1 runs in every pid namespace): under the suite's flags Deno
    // refuses /proc, so its liveness is unknown, and its young store is kept all the same.
    const other = await store(root, "20260101_000000_live02", {
      trajectory: `${root}/../not-written-either.json`,
      pid: 1,
    });
    const removed = await sweepCheckpointStores({ look: 100, remove: 100, minAgeMs: 0 });
    assert.deepEqual(removed, []);
    assert.ok((await Deno.lstat(live)).isDirectory, "a live session's store was swept");
    assert.ok((await Deno.lstat(other)).isDirectory, "another live session's store was swept");
  });
});

Deno.test("sweep: a store whose owner process is gone and whose trajectory is gone is removed; a link never followed", async () => {
  await using victim = await tempDir("deft-victim-");
  await Deno.writeTextFile(`${victim.path}/keep.txt`, "keep");
  await withState(async (root) => {
    // A pid above the kernel's maximum (4194304) never names a live process.
    await store(root, "20260101_000000_dead01", { trajectory: `${root}/gone.json`, pid: 9999999 });
    await store(root, "20260101_000000_nopid1", { trajectory: `${root}/gone.json` });
    await Deno.symlink(victim.path, `${root}/20260101_000000_link01`);
    const removed = await sweepCheckpointStores({ look: 100, remove: 100, minAgeMs: 0 });
    assert.deepEqual(removed.sort(), ["20260101_000000_dead01", "20260101_000000_nopid1"]);
    assert.equal(await Deno.readTextFile(`${victim.path}/keep.txt`), "keep");
  });
});

Deno.test("sweep: a store made early (its owner names no trajectory yet) is kept for days while its owner cannot be looked at, then goes", async () => {
  await withState(async (root) => {
    // pid 1: under the suite's flags Deno refuses /proc, so its liveness is unknown.
    const waiting = await store(root, "20260101_000000_early1", { pid: 1, workspace: "/w" });
    const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await Deno.utime(waiting, hoursAgo, hoursAgo);
    assert.deepEqual(await sweepCheckpointStores({ look: 100, remove: 100 }), []);
    assert.ok(
      (await Deno.lstat(waiting)).isDirectory,
      "a session idle at its prompt lost its store",
    );
    const weeksAgo = new Date(Date.now() - 14 * 24 * 60 * 60 * 1000);
    await Deno.utime(waiting, weeksAgo, weeksAgo);
    assert.deepEqual(await sweepCheckpointStores({ look: 100, remove: 100 }), [
      "20260101_000000_early1",
    ]);
  });
});
