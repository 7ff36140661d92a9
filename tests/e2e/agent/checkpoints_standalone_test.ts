/**
 * Checkpoints of a folder in no git repository (issue 52): a store of its own under Deft's state
 * dir (src/agent/checkpoint_place.ts) — a session there gets checkpoints and `deft rewind` brings
 * its files back; nothing is written into the folder; links stay links, FIFOs are never opened;
 * a `.git` planted later (pointing at a repository with hostile config) is never looked at; and a
 * folder too large to copy is refused with what to do.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { chatText, chatToolCalls, MockLLM } from "../../helpers/mock_llm.ts";
import { git } from "../../helpers/repo.ts";
import { tempDir, tempDirUntilExit } from "../../helpers/temp.ts";
import { markersIn, plantHostileConfig } from "../../helpers/hostile_git.ts";
import {
  checkpointTrajectory as trajectory,
  withCheckpointState,
} from "../../helpers/checkpoints.ts";
import {
  CheckpointError,
  hostCheckpointPlace,
  rewind,
  takeCheckpoint,
} from "../../../src/agent/checkpoints.ts";

function modelArgs(mock: MockLLM): string[] {
  return ["-p", "openai_compatible", "-m", "mock", "--model-base-url", `${mock.url}/v1`, "-k", "k"];
}

/** Every entry under `dir`: a file's mode and bytes, a link's target, a FIFO as such. */
async function snapshot(dir: string, under = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of Deno.readDir(`${dir}/${under}`)) {
    const rel = under ? `${under}/${entry.name}` : entry.name;
    const path = `${dir}/${rel}`;
    const info = await Deno.lstat(path);
    if (info.isSymlink) out[rel] = `link -> ${await Deno.readLink(path)}`;
    else if (info.isFifo) out[rel] = "fifo";
    else if (info.isDirectory) Object.assign(out, await snapshot(dir, rel));
    else {
      out[rel] = `${(info.mode! & 0o777).toString(8)} ${
        JSON.stringify(new TextDecoder().decode(await Deno.readFile(path)))
      }`;
    }
  }
  return out;
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success, `mkfifo ${path}`);
}

/** A folder in no repository: files, a folder, a link, a FIFO. */
async function plainFolder(dir: string): Promise<void> {
  await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
  await Deno.mkdir(`${dir}/sub`);
  await Deno.writeTextFile(`${dir}/sub/b.txt`, "bee\n");
  await Deno.writeTextFile(`${dir}/run.sh`, "#!/bin/sh\necho hi\n");
  await Deno.chmod(`${dir}/run.sh`, 0o755);
  await Deno.symlink("a.txt", `${dir}/link`);
  await mkfifo(`${dir}/pipe`);
}

const withState = (body: (id: string) => Promise<void>) => withCheckpointState(body, "own");

Deno.test("checkpoints: a folder in no git repository gets them, and deft rewind brings its files back; nothing is written into it", async () => {
  const dir = await tempDirUntilExit("deft-ckpt-plain-");
  await plainFolder(dir);
  const h = await tempDirUntilExit("deft-home-");
  const env = { HOME: h, XDG_STATE_HOME: `${h}/state` };
  const mock = MockLLM.start([
    chatToolCalls([["bash", {
      command: "echo two > a.txt && rm sub/b.txt && echo new > c.txt && chmod -x run.sh",
    }]]),
    chatText("done one"),
    chatToolCalls([["bash", { command: "ln -sfn sub/none link && echo three > a.txt" }]]),
    chatText("done two"),
  ]);
  try {
    const initial = await snapshot(dir);
    const session = await runDeft(
      ["interactive", "-w", dir, "--approval", "never", ...modelArgs(mock)],
      { cwd: h, env, stdin: "first\nsecond\n" },
    );
    assert.equal(session.code, 0, session.stderr);
    assert.equal(mock.requests.length, 4, session.stderr);
    const turn2 = await snapshot(dir);
    assert.equal(turn2["a.txt"], '644 "three\\n"', "the shell ran");

    const listed = await runDeft(["checkpoints", "-w", dir], { cwd: h, env });
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split("\n");
    assert.match(lines[0], /^#\s+TIME \(UTC\)\s+FILES\s+LABEL$/, listed.stdout);
    assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/)[0]), ["0", "1", "2"]);

    const back = await runDeft(["rewind", "-w", dir, "--to", "0"], { cwd: h, env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(await snapshot(dir), initial, "every file as it was at the start");
    const again = await runDeft(["rewind", "-w", dir, "--to", "2"], { cwd: h, env });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await snapshot(dir), turn2, "and as it was after turn 2");
  } finally {
    await mock.close();
  }
});

Deno.test("checkpoints: in a folder in no repository, a .git planted later pointing at a hostile repository is never looked at", async () => {
  await using work = await tempDir("deft-ckpt-plain-");
  await using hostile = await tempDir("deft-ckpt-hostile-repo-");
  await using markers = await tempDir("deft-markers-");
  await git(hostile.path, "init", "-q");
  const planted = await new Deno.Command("sh", {
    args: ["-c", plantHostileConfig(markers.path)],
    cwd: hostile.path,
  }).output();
  assert.ok(planted.success, new TextDecoder().decode(planted.stderr));
  const hostileIndex = await Deno.readFile(`${hostile.path}/.git/index`).catch(() => undefined);
  const hostileObjects = await git(hostile.path, "count-objects", "-v");
  await plainFolder(work.path);
  await withState(async (id) => {
    const initial = await snapshot(work.path);
    const at = await hostCheckpointPlace(work.path, id);
    assert.equal(at.standalone, true);
    const data = trajectory(id);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    // The model's shell: a change, then a `.git` file naming the hostile repository.
    await Deno.writeTextFile(`${work.path}/a.txt`, "two\n");
    await Deno.writeTextFile(`${work.path}/.git`, `gitdir: ${hostile.path}/.git\n`);
    const turn = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    assert.equal(turn.files_changed, 1, "a.txt; the .git file is not a file of the checkpoint");
    // A later process (deft rewind) opens the store again: it stays a store of its own.
    const later = await hostCheckpointPlace(work.path, id);
    assert.equal(later.standalone, true);
    await rewind(later, data, { to: 0, files: true, conversation: false });
    const now = await snapshot(work.path);
    assert.equal(now[".git"], `644 ${JSON.stringify(`gitdir: ${hostile.path}/.git\n`)}`);
    delete now[".git"];
    assert.deepEqual(now, initial, "back to the start");
  });
  assert.deepEqual(await markersIn(markers.path), [], "a program of the hostile config ran");
  assert.deepEqual(
    await Deno.readFile(`${hostile.path}/.git/index`).catch(() => undefined),
    hostileIndex,
    "the hostile repository's index was written",
  );
  assert.equal(await git(hostile.path, "count-objects", "-v"), hostileObjects);
});

Deno.test("checkpoints: in a folder in no repository, links stay links and are never written through; FIFOs are never opened", async () => {
  await using work = await tempDir("deft-ckpt-plain-");
  await using outside = await tempDir("deft-victim-");
  await Deno.writeTextFile(`${outside.path}/b.txt`, "victim\n");
  await plainFolder(work.path);
  const deadline = Deno.env.get("DEFT_GIT_DEADLINE_MS");
  // Were a FIFO opened, git would wait on it until this deadline, and the error would say so.
  Deno.env.set("DEFT_GIT_DEADLINE_MS", "20000");
  try {
    await withState(async (id) => {
      const initial = await snapshot(work.path);
      const at = await hostCheckpointPlace(work.path, id);
      const data = trajectory(id);
      const start = await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
      assert.equal(start.left_out, undefined, "the FIFO is no file of the checkpoint");
      // A new FIFO, and the folder swapped for a link to outside.
      await mkfifo(`${work.path}/new-pipe`);
      await Deno.remove(`${work.path}/sub`, { recursive: true });
      await Deno.symlink(outside.path, `${work.path}/sub`);
      const turn = await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
      assert.equal(turn.files_changed, 2, "sub/b.txt gone and the link sub new");
      await rewind(at, data, { to: 0, files: true, conversation: false });
      assert.equal(await Deno.readTextFile(`${outside.path}/b.txt`), "victim\n");
      assert.deepEqual([...Deno.readDirSync(outside.path)].map((e) => e.name), ["b.txt"]);
      const now = await snapshot(work.path);
      assert.equal(now["new-pipe"], "fifo", "a file no checkpoint holds is left alone");
      delete now["new-pipe"];
      assert.deepEqual(now, initial, "sub a folder again, the links as they were");
      // A file of the checkpoint turned into a FIFO: refused, naming it, never opened.
      await Deno.remove(`${work.path}/a.txt`);
      await mkfifo(`${work.path}/a.txt`);
      await assert.rejects(
        () => takeCheckpoint(at, data, { turn: 2, kind: "turn", label: "turn" }),
        (e: Error) => /a\.txt/.test(e.message) && !/did not finish/.test(e.message),
      );
    });
  } finally {
    if (deadline === undefined) Deno.env.delete("DEFT_GIT_DEADLINE_MS");
    else Deno.env.set("DEFT_GIT_DEADLINE_MS", deadline);
  }
});

Deno.test("checkpoints: a folder in no repository too large to copy is refused, saying why and what to do, with nothing copied", async () => {
  await using work = await tempDir("deft-ckpt-plain-");
  // 70 text files of 16 MiB (sparse past their first 8000 bytes): 1.1 GiB, past the store's bound.
  const head = new TextEncoder().encode("text line\n".repeat(800));
  for (let i = 0; i < 70; i++) {
    using file = await Deno.open(`${work.path}/big${i}.txt`, { write: true, create: true });
    await file.write(head);
    await file.truncate(16 * 1024 * 1024);
  }
  await withState(async (id) => {
    const at = await hostCheckpointPlace(work.path, id);
    await assert.rejects(
      () => takeCheckpoint(at, trajectory(id), { turn: 0, kind: "start", label: "start" }),
      (e: Error) => {
        assert.ok(e instanceof CheckpointError, `${e.name}: ${e.message}`);
        assert.match(e.message, /is not in a git repository/);
        assert.match(e.message, /70 files changed or new hold 1120 MiB/);
        assert.match(e.message, /checkpoints: false/);
        return true;
      },
    );
    const objects = [...Deno.readDirSync(`${at.store}/objects`)];
    assert.deepEqual(objects, [], "objects were copied into the store");
  });
});

Deno.test("checkpoints: a store of its own whose git folder went missing is made again, and its checkpoints still rewind", async () => {
  await using work = await tempDir("deft-ckpt-plain-");
  await plainFolder(work.path);
  await withState(async (id) => {
    const initial = await snapshot(work.path);
    const at = await hostCheckpointPlace(work.path, id);
    const data = trajectory(id);
    await takeCheckpoint(at, data, { turn: 0, kind: "start", label: "start" });
    await Deno.writeTextFile(`${work.path}/a.txt`, "two\n");
    await takeCheckpoint(at, data, { turn: 1, kind: "turn", label: "turn" });
    await Deno.remove(`${at.store}/attrs`, { recursive: true });
    const later = await hostCheckpointPlace(work.path, id);
    assert.equal(later.standalone, true);
    await rewind(later, data, { to: 0, files: true, conversation: false });
    assert.deepEqual(await snapshot(work.path), initial);
  });
});

Deno.test("checkpoints: a FIFO .gitignore in a folder in no repository stops its first checkpoint at once, named", async () => {
  await using work = await tempDir("deft-ckpt-plain-");
  await plainFolder(work.path);
  await mkfifo(`${work.path}/sub/.gitignore`);
  const deadline = Deno.env.get("DEFT_GIT_DEADLINE_MS");
  // Were the FIFO missed, git would wait on it until this deadline, and the error would say so.
  Deno.env.set("DEFT_GIT_DEADLINE_MS", "20000");
  try {
    await withState(async (id) => {
      const at = await hostCheckpointPlace(work.path, id);
      const started = Date.now();
      await assert.rejects(
        () => takeCheckpoint(at, trajectory(id), { turn: 0, kind: "start", label: "start" }),
        (e: Error) => e.message.includes(`${work.path}/sub/.gitignore`),
      );
      assert.ok(Date.now() - started < 15_000, "git waited on the FIFO");
    });
  } finally {
    if (deadline === undefined) Deno.env.delete("DEFT_GIT_DEADLINE_MS");
    else Deno.env.set("DEFT_GIT_DEADLINE_MS", deadline);
  }
});
