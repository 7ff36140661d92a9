/** One stream's capture: lenient decoding, stripping, limits, spilling to disk. */
import assert from "node:assert/strict";
import { OutputCapture } from "../../../src/tools/bash/output_capture.ts";
import { tempDir } from "../../helpers/temp.ts";

async function withDir(body: (dir: string) => Promise<void>) {
  await using tmp = await tempDir("deft-capture-test-");
  const dir = tmp.path;
  await body(dir);
}

Deno.test("capture: small output is returned whole and nothing is saved", async () => {
  await withDir(async (dir) => {
    const c = new OutputCapture({ label: "stdout", limit: 100, savePath: `${dir}/o.txt` });
    await c.write(new Uint8Array([0x68, 0x69, 0xe2, 0x82])); // "hi" + half a euro sign
    await c.write(new Uint8Array([0xac, 0x0a, 0xff]));
    const r = await c.finish();
    assert.deepEqual(r, { text: "hi€\n\uFFFD", savedPath: null, totalChars: 5, totalNewlines: 1 });
    await assert.rejects(() => Deno.stat(`${dir}/o.txt`), Deno.errors.NotFound);
  });
});

Deno.test("capture: output over the limit is clipped and saved stripped", async () => {
  await withDir(async (dir) => {
    const c = new OutputCapture({ label: "stdout", limit: 50, savePath: `${dir}/o.txt` });
    const lines = Array.from({ length: 40 }, (_, i) => `\x1b[32m${i}\x1b[0m\n`).join("");
    await c.write(new TextEncoder().encode(lines));
    const r = await c.finish();
    const plain = Array.from({ length: 40 }, (_, i) => `${i}\n`).join("");
    assert.equal(r.savedPath, `${dir}/o.txt`);
    assert.equal(await Deno.readTextFile(r.savedPath!), plain);
    assert.equal(r.totalChars, plain.length);
    assert.match(r.text, /characters omitted/);
  });
});

Deno.test("capture: large output spills to disk as it arrives", async () => {
  await withDir(async (dir) => {
    const c = new OutputCapture({
      label: "stdout",
      limit: 1000,
      savePath: `${dir}/o.txt`,
      spillChars: 10_000,
    });
    const chunk = new TextEncoder().encode("0123456789".repeat(1000));
    for (let i = 0; i < 20; i++) {
      await c.write(chunk);
      if (i === 2) assert.ok((await Deno.stat(`${dir}/o.txt`)).size > 0, "spilled early");
    }
    const r = await c.finish();
    assert.equal(r.totalChars, 200_000);
    assert.equal((await Deno.stat(r.savedPath!)).size, 200_000);
  });
});

Deno.test("capture: the saved file is capped, and the marker says so", async () => {
  await withDir(async (dir) => {
    const c = new OutputCapture({
      label: "stdout",
      limit: 100,
      savePath: `${dir}/o.txt`,
      spillChars: 1000,
      maxSavedBytes: 5000,
    });
    const chunk = new TextEncoder().encode("a\n".repeat(1000));
    for (let i = 0; i < 10; i++) await c.write(chunk);
    const r = await c.finish();
    assert.equal(r.totalChars, 20_000);
    assert.equal((await Deno.stat(r.savedPath!)).size, 5000);
    assert.match(r.text, /The first 5000 bytes of the stdout \(20000 characters in all/);
    assert.ok(r.text.endsWith("a\na\n"), "the tail is still shown");
  });
});
