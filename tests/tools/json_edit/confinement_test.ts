/** json_edit_tool stays in the workspace for every operation, and serialises edits per file. */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ToolCall } from "../../../src/tools/executor.ts";
import { withJsonEditor } from "../../helpers/json_editor.ts";
import { tempDir } from "../../helpers/temp.ts";

const SECRET = `{"secret": true}\n`;

Deno.test("confinement: every operation refuses paths leaving the workspace", async () => {
  await using outsideDir = await tempDir("deft-outside-");
  const outside = outsideDir.path;
  await Deno.writeTextFile(join(outside, "s.json"), SECRET);
  await withJsonEditor(async ({ ws, call }) => {
    await Deno.symlink(outside, join(ws, "dirlink"));
    await Deno.symlink(join(outside, "s.json"), join(ws, "filelink.json"));
    await Deno.symlink(join(outside, "gone.json"), join(ws, "dangling.json"));
    await Deno.mkdir(join(ws, "inner"));
    const name = outside.split("/").pop();
    const paths = [
      join(outside, "s.json"),
      `${ws}/../${name}/s.json`,
      `${ws}/inner/../../${name}/s.json`,
      join(ws, "dirlink", "s.json"),
      join(ws, "filelink.json"),
      join(ws, "dangling.json"),
    ];
    for (const file_path of paths) {
      for (
        const args of [
          { operation: "view", file_path },
          { operation: "view", file_path, json_path: "$.secret" },
          { operation: "set", file_path, json_path: "$.secret", value: false },
          { operation: "add", file_path, json_path: "$.x", value: 1 },
          { operation: "remove", file_path, json_path: "$.secret" },
        ]
      ) {
        const r = await call(args);
        assert.equal(r.success, false, JSON.stringify(args));
        assert.match(r.error!, /leaves the workspace/, JSON.stringify(args));
      }
    }
  });
  assert.equal(await Deno.readTextFile(join(outside, "s.json")), SECRET);
  const names = [];
  for await (const e of Deno.readDir(outside)) names.push(e.name);
  assert.deepEqual(names, ["s.json"]);
});

Deno.test("a symlink inside the workspace is edited through: target changed, link kept", async () => {
  await withJsonEditor(async ({ ws, call, file }) => {
    const target = await file("real.json", `{"a": 1}`);
    await Deno.symlink(target, join(ws, "link.json"));
    await call({ operation: "set", file_path: join(ws, "link.json"), json_path: "$.a", value: 2 });
    assert.equal(await Deno.readTextFile(target), `{"a": 2}`);
    assert.equal((await Deno.lstat(join(ws, "link.json"))).isSymlink, true);
  });
});

Deno.test("concurrency: 30 parallel adds to one file are all there", async () => {
  await withJsonEditor(async ({ executor, file }) => {
    const path = await file("many.json", `{\n  "items": []\n}\n`);
    const calls: ToolCall[] = Array.from({ length: 30 }, (_, i) => ({
      name: "json_edit_tool",
      call_id: `${i}`,
      arguments: { operation: "add", file_path: path, json_path: `$.k${i}`, value: i },
    }));
    const results = await executor.parallelToolCall(calls);
    assert.ok(results.every((r) => r.success), results.find((r) => !r.success)?.error ?? "");
    const data = JSON.parse(await Deno.readTextFile(path));
    for (let i = 0; i < 30; i++) assert.equal(data[`k${i}`], i);
  });
});

Deno.test("size limit: a file over maxFileBytes is refused with a way forward", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("big.json", JSON.stringify({ data: "x".repeat(2000) }));
    const r = await call({ operation: "view", file_path: path });
    assert.match(r.error!, /larger than the 1\.0 KB json_edit_tool reads\. Query it with bash/);
  }, { maxFileBytes: 1024 });
});

Deno.test("read-only sandbox: views work, every change is refused and the file stays", async () => {
  await withJsonEditor(async ({ call, file }) => {
    const path = await file("c.json", '{ "a": 1 }\n');
    const view = await call({ operation: "view", file_path: path, json_path: "$.a" });
    assert.ok(view.success, String(view.error));
    for (
      const args of [
        { operation: "set", file_path: path, json_path: "$.a", value: 2 },
        { operation: "add", file_path: path, json_path: "$.b", value: 2 },
        { operation: "remove", file_path: path, json_path: "$.a" },
      ]
    ) {
      const r = await call(args);
      assert.match(
        String(r.error),
        /workspace is read-only \(sandbox: read-only\)/,
        args.operation,
      );
    }
    assert.equal(await Deno.readTextFile(path), '{ "a": 1 }\n');
  }, { sandbox: "read-only" });
});

Deno.test("confinement: a hard link to a JSON file outside the workspace is never edited through", async () => {
  await using outsideDir = await tempDir("deft-outside-");
  const marker = join(outsideDir.path, "s.json");
  await Deno.writeTextFile(marker, SECRET);
  await withJsonEditor(async ({ ws, call }) => {
    const linked = join(ws, "settings.json");
    await Deno.link(marker, linked);
    for (
      const args of [
        { operation: "set", file_path: linked, json_path: "$.secret", value: false },
        { operation: "add", file_path: linked, json_path: "$.x", value: 1 },
        { operation: "remove", file_path: linked, json_path: "$.secret" },
      ]
    ) {
      const r = await call(args);
      assert.equal(r.success, false, `${args.operation} wrote through the hard link`);
      assert.match(r.error!, /has 2 hard links .*does not edit a file that other paths share/);
    }
    assert.equal(await Deno.readTextFile(marker), SECRET, "the outside file changed");
  });
});
