/**
 * Promises of Deft's own reads of a file the model names (the approval preview, the console's
 * diff, `@` mentions, ACP's console), each guarded by the test named:
 * - a file over the limit is refused, never returned cut: "… over the limit …";
 * - a file at the limit is returned whole: "… at the limit …";
 * - a missing file is null (an edit would create it), never an error: "… missing …";
 * - nothing outside the workspace is read, as written or through a link: "… outside …".
 * (A FIFO is refused unopened: tests/e2e/ guards that, since making one needs a process.)
 */
import * as assert from "node:assert/strict";
import { join } from "node:path";
import { readWorkspaceFile } from "../../../src/tools/fs/workspace_read.ts";
import { tempDir } from "../../helpers/temp.ts";

Deno.test("workspace read: a file over the limit is refused, never returned cut", async () => {
  await using dir = await tempDir();
  await Deno.writeFile(join(dir.path, "big.txt"), new Uint8Array(1025).fill(65));
  assert.equal(readWorkspaceFile(dir.path, "big.txt", 1024), undefined);
  assert.equal(readWorkspaceFile(dir.path, "big.txt", 1000), undefined);
});

Deno.test("workspace read: a file at the limit is returned whole", async () => {
  await using dir = await tempDir();
  const bytes = new Uint8Array(1024).map((_, i) => i % 251);
  await Deno.writeFile(join(dir.path, "edge.bin"), bytes);
  assert.deepEqual(readWorkspaceFile(dir.path, "edge.bin", 1024), bytes);
  assert.deepEqual(readWorkspaceFile(dir.path, join(dir.path, "edge.bin"), 4096), bytes);
});

Deno.test("workspace read: a missing file is null", async () => {
  await using dir = await tempDir();
  assert.equal(readWorkspaceFile(dir.path, "new/file.txt", 1024), null);
});

Deno.test("workspace read: nothing outside the workspace, as written or through a link", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  await Deno.writeTextFile(join(outside.path, "secret"), "s3cret");
  await Deno.symlink(join(outside.path, "secret"), join(dir.path, "link"));
  await Deno.symlink(outside.path, join(dir.path, "folder"));
  assert.equal(readWorkspaceFile(dir.path, join(outside.path, "secret"), 1024), undefined);
  assert.equal(readWorkspaceFile(dir.path, "../" + outside.path, 1024), undefined);
  assert.equal(readWorkspaceFile(dir.path, "link", 1024), undefined);
  assert.equal(readWorkspaceFile(dir.path, "folder/secret", 1024), undefined);
});
