/** The atomic writer shared by both editors. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileAtomic } from "../../../src/tools/fs/atomic.ts";
import { strayTempFiles, utf8 } from "../../helpers/editor.ts";
import { tempDir } from "../../helpers/temp.ts";

/** A part that fails while being written, like a full disk would. */
class Exploding extends Uint8Array {
  override subarray(): Uint8Array<ArrayBuffer> {
    throw new Error("disk on fire");
  }
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  await using tmp = await tempDir("deft-atomic-");
  const dir = tmp.path;
  await fn(dir);
}

Deno.test("atomic: writes the concatenated parts and the requested mode", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "f");
    await Deno.writeTextFile(path, "old");
    await writeFileAtomic(path, [utf8("a"), utf8(""), utf8("bc")], { mode: 0o751 });
    assert.equal(await Deno.readTextFile(path), "abc");
    assert.equal((await Deno.stat(path)).mode! & 0o7777, 0o751);
    assert.deepEqual(await strayTempFiles(dir), []);
  });
});

Deno.test("atomic: a failure mid-write leaves the old file whole and no temp file", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "f");
    await Deno.writeTextFile(path, "original content");
    await assert.rejects(
      writeFileAtomic(path, [utf8("partial "), new Exploding(8)]),
      /disk on fire/,
    );
    assert.equal(await Deno.readTextFile(path), "original content");
    assert.deepEqual(await strayTempFiles(dir), []);
  });
});

Deno.test("atomic: readers never see a half-written file", async () => {
  await withDir(async (dir) => {
    const path = join(dir, "f");
    const a = new Uint8Array(2_000_000).fill(0x61);
    const b = new Uint8Array(2_000_000).fill(0x62);
    await Deno.writeFile(path, a);
    let writing = true;
    // The reader's failure is kept and rethrown once the writer stopped: an assertion inside a
    // promise awaited only at the end would otherwise surface late, or as an unhandled rejection.
    let failure: unknown;
    let reads = 0;
    const reader = (async () => {
      try {
        while (writing || reads < 5) {
          const bytes = await Deno.readFile(path);
          assert.equal(bytes.length, 2_000_000);
          assert.ok(bytes.every((x) => x === bytes[0]), "mixed content seen");
          reads++;
        }
      } catch (e) {
        failure = e;
      }
    })();
    try {
      for (let i = 0; i < 10 && failure === undefined; i++) {
        await writeFileAtomic(path, [i % 2 ? a : b]);
      }
    } finally {
      writing = false;
      await reader;
    }
    if (failure !== undefined) throw failure;
    assert.ok(reads >= 5, `the reader read ${reads} times`);
  });
});
