/**
 * The editor replaces a file through the atomic writer: every edit gives the path a new inode, and
 * a reader in another process sees the old text or the new one, never a mix or a truncated file.
 */
import assert from "node:assert/strict";
import { withEditor } from "../../../helpers/editor.ts";

Deno.test("editor: str_replace and insert replace the file by rename (a new inode each time)", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = `${ws}/a.txt`;
    await Deno.writeTextFile(path, "alpha\nbeta\n");
    const before = (await Deno.stat(path)).ino;
    const r = await call({ command: "str_replace", path, old_str: "beta", new_str: "gamma" });
    assert.equal(r.success, true, r.error ?? "");
    const afterReplace = (await Deno.stat(path)).ino;
    assert.notEqual(afterReplace, before, "str_replace rewrote the file in place");
    const i = await call({ command: "insert", path, insert_line: 1, new_str: "inserted" });
    assert.equal(i.success, true, i.error ?? "");
    assert.notEqual((await Deno.stat(path)).ino, afterReplace, "insert rewrote the file in place");
    assert.equal(await Deno.readTextFile(path), "alpha\ninserted\ngamma\n");
  });
});

Deno.test("editor: a reader in another process never sees a half-written file during edits", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = `${ws}/big.txt`;
    // Every version is the marker line repeated, then an end line: a reader can tell a whole file
    // from a partial one by its last line.
    const body = "0123456789abcdef".repeat(8).concat("\n").repeat(20_000); // ~2.6 MB
    await Deno.writeTextFile(path, `v0\n${body}END\n`);
    const stop = `${ws}/.stop`;
    const reader = new Deno.Command("python3", {
      args: [
        "-c",
        `import os, sys
path, stop = sys.argv[1], sys.argv[2]
reads = bad = 0
open(stop + ".ready", "w").close()
while not os.path.exists(stop):
    with open(path, "rb") as f:
        data = f.read()
    reads += 1
    if not data.endswith(b"END\\n"):
        bad += 1
print(reads, bad)`,
        path,
        stop,
      ],
      stdout: "piped",
    }).spawn();
    while (!(await Deno.stat(`${stop}.ready`).then(() => true, () => false))) {
      await new Promise((r) => setTimeout(r, 10));
    }
    for (let v = 0; v < 30; v++) {
      const r = await call({
        command: "str_replace",
        path,
        old_str: `v${v}\n`,
        new_str: `v${v + 1}\n`,
      });
      assert.equal(r.success, true, r.error ?? "");
    }
    await Deno.writeTextFile(stop, "");
    const [reads, bad] = new TextDecoder().decode((await reader.output()).stdout).trim().split(" ")
      .map(Number);
    assert.ok(reads > 0, "the reader never read the file");
    assert.equal(bad, 0, `${bad} of ${reads} reads saw a half-written file`);
    assert.ok((await Deno.readTextFile(path)).startsWith("v30\n"));
  });
});
