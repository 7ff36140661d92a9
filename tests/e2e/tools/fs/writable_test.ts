/** The editors' write check never waits: a FIFO swapped in for the file is refused at once. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertWritable } from "../../../../src/tools/fs/writable.ts";
import { FileToolError } from "../../../../src/tools/fs/errors.ts";
import { tempDir } from "../../../helpers/temp.ts";

Deno.test("assertWritable: a FIFO with no reader is refused at once, not waited on", async () => {
  await using dir = await tempDir();
  const fifo = join(dir.path, "pipe");
  assert.ok((await new Deno.Command("mkfifo", { args: [fifo] }).output()).success);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("still waiting after 5 s"), 5_000);
  });
  const checked = assertWritable(fifo, "pipe").then(() => "allowed", (e) => e);
  const outcome = await Promise.race([checked, waited]);
  clearTimeout(timer);
  assert.ok(outcome instanceof FileToolError, String(outcome));
  assert.match(outcome.message, /pipe is not a regular file/);
});

Deno.test("assertWritable: a regular file passes; a missing one is named", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "a.txt");
  await Deno.writeTextFile(file, "a\n");
  await assertWritable(file, "a.txt");
  await assert.rejects(assertWritable(join(dir.path, "nope"), "nope"), /nope does not exist/);
});
