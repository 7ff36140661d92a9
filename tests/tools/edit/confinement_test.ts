/** Every command of the editor stays inside the workspace: symlinks, `..`, dangling links. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor, withOutsideDir } from "../../helpers/editor.ts";

const SECRET = "do not touch\n";

/**
 * One call per command aimed at `path` (a file that, if reached, lies outside), plus a `create`
 * of `newPath` (a new file that would land outside).
 */
function everyCommand(path: string, newPath = path): Record<string, unknown>[] {
  return [
    { command: "view", path },
    { command: "view", path, view_range: [1, 1] },
    { command: "create", path: newPath, file_text: "x" },
    { command: "create", path, file_text: "x" },
    { command: "str_replace", path, old_str: "do not", new_str: "did" },
    { command: "insert", path, insert_line: 0, new_str: "x" },
    { command: "undo_edit", path },
  ];
}

async function assertUntouched(outside: string): Promise<void> {
  assert.equal(await Deno.readTextFile(join(outside, "secret.txt")), SECRET);
  const names: string[] = [];
  for await (const e of Deno.readDir(outside)) names.push(e.name);
  assert.deepEqual(names.sort(), ["secret.txt", "sub"]);
}

Deno.test("confinement: every command refuses paths leaving the workspace", async () => {
  await withOutsideDir(async (outside) => {
    await Deno.writeTextFile(join(outside, "secret.txt"), SECRET);
    await Deno.mkdir(join(outside, "sub"));
    await withEditor(async ({ ws, call }) => {
      await Deno.symlink(outside, join(ws, "dirlink"));
      await Deno.symlink(join(outside, "secret.txt"), join(ws, "filelink"));
      await Deno.mkdir(join(ws, "inner"));
      await Deno.symlink(join(outside, "sub"), join(ws, "sublink"));
      const outsideName = outside.split("/").pop();
      const targets: [string, string][] = [
        // plainly outside
        [join(outside, "secret.txt"), join(outside, "new.txt")],
        // `..`
        [`${ws}/../${outsideName}/secret.txt`, `${ws}/../${outsideName}/new.txt`],
        // `..` through a real directory
        [`${ws}/inner/../../${outsideName}/secret.txt`, `${ws}/inner/../../${outsideName}/n.txt`],
        // directory symlink
        [join(ws, "dirlink", "secret.txt"), join(ws, "dirlink", "new.txt")],
        // file symlink
        [join(ws, "filelink"), join(ws, "filelink")],
        // `..` after a symlink climbs from its target, not from the link
        [`${ws}/sublink/../secret.txt`, `${ws}/sublink/../new.txt`],
      ];
      for (const [target, newPath] of targets) {
        for (const args of everyCommand(target, newPath)) {
          const r = await call(args);
          assert.equal(r.success, false, `${JSON.stringify(args)} succeeded`);
          assert.match(r.error!, /leaves the workspace/, JSON.stringify(args));
        }
      }
      const dir = await call({ command: "view", path: join(ws, "dirlink") });
      assert.match(dir.error!, /leaves the workspace .* through a symbolic link/);
      await assertUntouched(outside);
    });
  });
});

Deno.test("confinement: a dangling symlink to outside is refused; to inside it is followed", async () => {
  await withOutsideDir(async (outside) => {
    await Deno.writeTextFile(join(outside, "secret.txt"), SECRET);
    await Deno.mkdir(join(outside, "sub"));
    await withEditor(async ({ ws, call }) => {
      await Deno.symlink(join(outside, "planted.txt"), join(ws, "dangling-out"));
      for (const args of everyCommand(join(ws, "dangling-out"))) {
        const r = await call(args);
        assert.match(r.error ?? "", /leaves the workspace/, JSON.stringify(args));
      }
      await assertUntouched(outside);

      await Deno.symlink(join(ws, "later.txt"), join(ws, "dangling-in"));
      const created = await call({
        command: "create",
        path: join(ws, "dangling-in"),
        file_text: "hi\n",
      });
      assert.equal(created.success, true, created.error ?? "");
      assert.equal(await Deno.readTextFile(join(ws, "later.txt")), "hi\n");
      assert.equal((await Deno.lstat(join(ws, "dangling-in"))).isSymlink, true);
    });
  });
});

Deno.test("confinement: a symlink swapped in after an edit is not followed by undo", async () => {
  await withOutsideDir(async (outside) => {
    await Deno.writeTextFile(join(outside, "secret.txt"), SECRET);
    await Deno.mkdir(join(outside, "sub"));
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "f.txt");
      await Deno.writeTextFile(path, SECRET);
      await call({ command: "str_replace", path, old_str: "do not", new_str: "please" });
      await Deno.remove(path);
      await Deno.symlink(join(outside, "secret.txt"), path);
      const r = await call({ command: "undo_edit", path });
      assert.match(r.error!, /leaves the workspace/);
      await assertUntouched(outside);
    });
  });
});

Deno.test("read-only sandbox: views work, every change is refused and nothing is written", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "a.txt");
    await Deno.writeTextFile(path, "alpha\n");
    const view = await call({ command: "view", path });
    assert.ok(view.success, String(view.error));
    for (
      const args of [
        { command: "create", path: join(ws, "new.txt"), file_text: "x\n" },
        { command: "str_replace", path, old_str: "alpha", new_str: "beta" },
        { command: "insert", path, insert_line: 0, new_str: "top" },
        { command: "undo_edit", path },
      ]
    ) {
      const r = await call(args);
      assert.match(String(r.error), /workspace is read-only \(sandbox: read-only\)/, args.command);
    }
    assert.equal(await Deno.readTextFile(path), "alpha\n");
    await assert.rejects(Deno.stat(join(ws, "new.txt")), Deno.errors.NotFound);
  }, { sandbox: "read-only" });
});
