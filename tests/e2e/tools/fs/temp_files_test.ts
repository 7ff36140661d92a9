/** Temporary files of atomic writes: names at the length limit, leftovers of killed writes. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { workspacePatch } from "../../../../src/agent/patch.ts";
import { writeFileAtomic } from "../../../../src/tools/fs/atomic.ts";
import { STALE_TEMP_MS, TEMP_NAME_PATTERN, tempName } from "../../../../src/tools/fs/temp_names.ts";
import { strayTempFiles, withEditor } from "../../../helpers/editor.ts";
import { git } from "../../../helpers/repo.ts";
import { tempDir } from "../../../helpers/temp.ts";

const ATOMIC = new URL("../../../../src/tools/fs/atomic.ts", import.meta.url).href;

Deno.test("create works for a 255-byte name of 85 CJK characters", async () => {
  await withEditor(async ({ ws, call }) => {
    const name = "字".repeat(85);
    assert.equal(new TextEncoder().encode(name).length, 255);
    const path = join(ws, name);
    const created = await call({ command: "create", path, file_text: "hello\n" });
    assert.equal(created.success, true, String(created.error));
    assert.equal(await Deno.readTextFile(path), "hello\n");
    const edited = await call({ command: "str_replace", path, old_str: "hello", new_str: "bye" });
    assert.equal(edited.success, true, String(edited.error));
    assert.deepEqual(await strayTempFiles(ws), []);
  });
});

Deno.test("temporary names have a fixed short length (never longer than the target's) and are recognised", () => {
  for (const kind of ["tmp", "bak"] as const) {
    const name = tempName(kind);
    assert.equal(new TextEncoder().encode(name).length, 22, name);
    assert.match(name, TEMP_NAME_PATTERN);
  }
  assert.doesNotMatch("a.txt", TEMP_NAME_PATTERN);
  assert.doesNotMatch(".deft-notes", TEMP_NAME_PATTERN);
});

Deno.test("a killed write's leftover is removed at the next write and never in a patch", async () => {
  const dirTemp = await tempDir("deft-killed-");
  const dir = dirTemp.path;
  try {
    await git(dir, "init", "-q");
    await Deno.writeTextFile(join(dir, "kept.txt"), "base\n");
    await git(dir, "add", ".");
    await git(dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base");
    // A process writing 400 MB in 1 MB parts, killed while its temporary file grows.
    const code = `import { writeFileAtomic } from "${ATOMIC}";
      const part = new Uint8Array(1 << 20).fill(120);
      await writeFileAtomic(${JSON.stringify(join(dir, "big.bin"))}, Array(400).fill(part));`;
    const writer = new Deno.Command(Deno.execPath(), {
      args: ["eval", code],
      stdout: "null",
      stderr: "null",
    }).spawn();
    let leftover: string | undefined;
    for (let i = 0; i < 600 && !leftover; i++) {
      await new Promise((r) => setTimeout(r, 20));
      for (const name of await strayTempFiles(dir)) {
        if ((await Deno.stat(join(dir, name))).size > 0) leftover = name;
      }
    }
    writer.kill("SIGKILL");
    await writer.status;
    assert.ok(leftover, "the writer never started its temporary file");
    assert.equal((await strayTempFiles(dir)).length, 1);

    // Not in a patch, even before it is cleaned.
    await Deno.writeTextFile(join(dir, "kept.txt"), "changed\n");
    const patch = await workspacePatch(dir);
    assert.match(patch, /kept\.txt/);
    assert.ok(!patch.includes(leftover), "the leftover is in the patch");

    // Once it is older than any write could take, the next write to the folder removes it.
    const old = new Date(Date.now() - 2 * STALE_TEMP_MS);
    await Deno.utime(join(dir, leftover), old, old);
    await writeFileAtomic(join(dir, "other.txt"), [new TextEncoder().encode("x")]);
    assert.deepEqual(await strayTempFiles(dir), []);
    assert.equal(await Deno.readTextFile(join(dir, "other.txt")), "x");
    await assert.rejects(Deno.stat(join(dir, "big.bin")), Deno.errors.NotFound);
  } finally {
    await dirTemp.remove();
  }
});

Deno.test("a recent temporary file (a write that may be under way) is not removed", async () => {
  const dirTemp = await tempDir("deft-live-");
  const dir = dirTemp.path;
  try {
    const live = join(dir, tempName("tmp"));
    await Deno.writeTextFile(live, "partial");
    // Another process writes to this folder: it sweeps stale leftovers only.
    const code = `import { writeFileAtomic } from "${ATOMIC}";
      await writeFileAtomic(${JSON.stringify(join(dir, "b.txt"))}, [new Uint8Array([98])]);`;
    const out = await new Deno.Command(Deno.execPath(), { args: ["eval", code] }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.deepEqual(await strayTempFiles(dir), [live.slice(dir.length + 1)]);
  } finally {
    await dirTemp.remove();
  }
});
