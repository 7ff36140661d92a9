/** Parallel calls: one file at a time (no lost updates), different files at once. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withFileLock } from "../../../src/tools/fs/lock.ts";
import type { ToolCall } from "../../../src/tools/executor.ts";
import { strayTempFiles, withEditor } from "../../helpers/editor.ts";

Deno.test("concurrency: 50 parallel inserts into one file are all there, in call order", async () => {
  await withEditor(async ({ ws, executor }) => {
    const path = join(ws, "list.txt");
    await Deno.writeTextFile(path, "first\nlast\n");
    const calls: ToolCall[] = Array.from({ length: 50 }, (_, i) => ({
      name: "str_replace_based_edit_tool",
      call_id: `call-${i}`,
      arguments: { command: "insert", path, insert_line: 1, new_str: `item ${i}` },
    }));
    const results = await executor.parallelToolCall(calls);
    assert.ok(results.every((r) => r.success), results.find((r) => !r.success)?.error ?? "");
    assert.deepEqual(results.map((r) => r.call_id), calls.map((c) => c.call_id));
    const lines = (await Deno.readTextFile(path)).split("\n");
    assert.equal(lines.length, 53);
    for (let i = 0; i < 50; i++) assert.ok(lines.includes(`item ${i}`), `item ${i} lost`);
    // Each insert goes after line 1, so later calls end up higher.
    assert.deepEqual(lines.slice(1, 51), Array.from({ length: 50 }, (_, i) => `item ${49 - i}`));
    assert.deepEqual(await strayTempFiles(ws), []);
  });
});

Deno.test("concurrency: parallel str_replaces through different spellings of one file", async () => {
  await withEditor(async ({ ws, executor }) => {
    await Deno.mkdir(join(ws, "d"));
    const path = join(ws, "d", "n.txt");
    const names = Array.from({ length: 20 }, (_, i) => `<${i}>`);
    await Deno.writeTextFile(path, names.join("\n"));
    await Deno.symlink(join(ws, "d"), join(ws, "alias"));
    const spellings = [path, join(ws, "alias", "n.txt"), `${ws}/d/../d/n.txt`];
    const calls: ToolCall[] = names.map((name, i) => ({
      name: "str_replace_based_edit_tool",
      call_id: `${i}`,
      arguments: {
        command: "str_replace",
        path: spellings[i % 3],
        old_str: name,
        new_str: `[${i}]`,
      },
    }));
    const results = await executor.parallelToolCall(calls);
    assert.ok(results.every((r) => r.success), results.find((r) => !r.success)?.error ?? "");
    assert.equal(await Deno.readTextFile(path), names.map((_, i) => `[${i}]`).join("\n"));
  });
});

Deno.test("concurrency: a held lock on one file does not delay another file", async () => {
  await withEditor(async ({ ws, call }) => {
    const a = join(ws, "a.txt");
    const b = join(ws, "b.txt");
    await Deno.writeTextFile(a, "a\n");
    await Deno.writeTextFile(b, "b\n");
    let release!: () => void;
    const held = withFileLock(a, () => new Promise<void>((r) => release = r));
    const onB = await call({ command: "str_replace", path: b, old_str: "b", new_str: "B" });
    assert.equal(onB.success, true);
    let aDone = false;
    const onA = call({ command: "str_replace", path: a, old_str: "a", new_str: "A" })
      .then((r) => {
        aDone = true;
        return r;
      });
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(aDone, false, "an edit of a locked file must wait");
    release();
    await held;
    assert.equal((await onA).success, true);
    assert.equal(await Deno.readTextFile(a), "A\n");
  });
});

Deno.test("lock: calls for one key run one at a time, in order, even when one throws", async () => {
  const order: string[] = [];
  let running = 0;
  const task = (name: string, fail = false) =>
    withFileLock("/k", async () => {
      running++;
      assert.equal(running, 1);
      await new Promise((r) => setTimeout(r, 2));
      order.push(name);
      running--;
      if (fail) throw new Error(name);
    });
  const results = await Promise.allSettled([task("a"), task("b", true), task("c")]);
  assert.deepEqual(order, ["a", "b", "c"]);
  assert.equal(results[1].status, "rejected");
});
