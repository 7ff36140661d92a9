/** `view`: files with and without `view_range`, clipping, large files, directories. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../../helpers/editor.ts";
import { tempDir } from "../../../helpers/temp.ts";

const header = (path: string) => `Here's the result of running \`cat -n\` on ${path}:\n`;

function numbered(from: number, lines: string[]): string {
  return lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join("\n") + "\n";
}

Deno.test("view: whole file in cat -n format", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "alpha\n\tbeta\n\ngamma");
    const r = await call({ command: "view", path });
    assert.equal(r.output, header(path) + numbered(1, ["alpha", "\tbeta", "", "gamma"]));
    const empty = join(ws, "empty.txt");
    await Deno.writeTextFile(empty, "");
    assert.equal(
      (await call({ command: "view", path: empty })).output,
      `The file ${empty} is empty.`,
    );
    const all = await call({ command: "view", path, view_range: [] });
    assert.equal(all.output, r.output);
  });
});

Deno.test("view: view_range, -1 for the end, and an end past the file", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    const lines = Array.from({ length: 10 }, (_, i) => `l${i + 1}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const mid = await call({ command: "view", path, view_range: [3, 5] });
    assert.equal(mid.output, header(path) + numbered(3, ["l3", "l4", "l5"]));
    const tail = await call({ command: "view", path, view_range: [9, -1] });
    assert.equal(tail.output, header(path) + numbered(9, ["l9", "l10"]));
    const one = await call({ command: "view", path, view_range: [10, 10] });
    assert.equal(one.output, header(path) + numbered(10, ["l10"]));
    const past = await call({ command: "view", path, view_range: [9, 40] });
    assert.equal(
      past.output,
      header(path) + numbered(9, ["l9", "l10"]) +
        "<NOTE>The file has only 10 lines; shown up to the last one.</NOTE>\n",
    );
  });
});

Deno.test("view: invalid view_range messages", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "a\nb\nc\n");
    const cases: [unknown[], string][] = [
      [[1], "Invalid `view_range`. It should be a list of two integers."],
      [[1, 2, 3], "Invalid `view_range`. It should be a list of two integers."],
      [
        [0, 2],
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of " +
        "lines of the file: [1, 3]",
      ],
      [
        [4, -1],
        "Invalid `view_range`: [4, -1]. Its first element `4` should be within the range of " +
        "lines of the file: [1, 3]",
      ],
      [
        [3, 2],
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than " +
        "its first `3` (or -1 for the end of the file)",
      ],
    ];
    for (const [range, message] of cases) {
      const r = await call({ command: "view", path, view_range: range });
      assert.equal(r.error, message, JSON.stringify(range));
    }
    const notInts = await call({ command: "view", path, view_range: ["1", 2] });
    assert.match(notInts.error!, /`view_range\[0\]` must be an integer/);
    const empty = join(ws, "empty.txt");
    await Deno.writeTextFile(empty, "");
    const r = await call({ command: "view", path: empty, view_range: [1, 1] });
    assert.match(r.error!, /^Invalid `view_range`: \[1, 1\]\. The file .* is empty\./);
  });
});

Deno.test("view: long output is clipped at 16,000 characters with a note", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "long.txt");
    const lines = Array.from({ length: 2000 }, (_, i) => `line number ${i + 1} with some text`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const r = await call({ command: "view", path });
    const out = r.output!;
    const body = out.slice(header(path).length, out.indexOf("<response clipped>"));
    assert.ok(body.length <= 16_001, `${body.length}`);
    assert.ok(body.length > 15_000);
    assert.match(
      out,
      /<response clipped><NOTE>To save on context only part of this file has been shown to you \(lines 1-\d+ of 2000\)\. Narrow `view_range`.*`grep -n`/,
    );
    const lastShown = Number(body.trimEnd().split("\n").pop()!.split("\t")[0]);
    assert.equal(
      body.trimEnd().split("\n").pop(),
      `${String(lastShown).padStart(6)}\t${lines[lastShown - 1]}`,
    );
  });
});

Deno.test("view: one enormous line is cut, not dropped", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "min.js");
    await Deno.writeTextFile(path, "é".repeat(100_000) + "\nsecond\n");
    const r = await call({ command: "view", path });
    assert.ok(r.output!.startsWith(header(path) + "     1\téééé"));
    assert.match(r.output!, /<response clipped>/);
    assert.ok(!r.output!.includes("\uFFFD"));
  });
});

Deno.test("view: a file over the size limit needs a view_range, which still works", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "big.log");
    const lines = Array.from({ length: 300 }, (_, i) => `entry ${i + 1}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const whole = await call({ command: "view", path });
    assert.match(
      whole.error!,
      /^The file .*big\.log is 2\.\d KB, larger than the 1\.0 KB the editor shows whole\. View part of it with `view_range`/,
    );
    const tail = await call({ command: "view", path, view_range: [299, -1] });
    assert.equal(tail.output, header(path) + numbered(299, ["entry 299", "entry 300"]));
    const head = await call({ command: "view", path, view_range: [1, 2] });
    assert.equal(head.output, header(path) + numbered(1, ["entry 1", "entry 2"]));
    const edit = await call({ command: "str_replace", path, old_str: "entry 7\n", new_str: "" });
    assert.match(
      edit.error!,
      /larger than the 1\.0 KB the editor edits\. Edit it with bash instead/,
    );
    const ins = await call({ command: "insert", path, insert_line: 1, new_str: "x" });
    assert.match(ins.error!, /larger than the 1\.0 KB the editor edits/);
  }, { maxFileBytes: 1024 });
});

Deno.test("view: directories two levels deep, hidden entries left out, sorted", async () => {
  await withEditor(async ({ ws, call }) => {
    for (const d of ["src/deep/deeper", "docs", ".git/objects", "src/.cache"]) {
      await Deno.mkdir(join(ws, d), { recursive: true });
    }
    for (
      const f of ["b.txt", "a.txt", ".env", "src/z.ts", "src/m.ts", "src/deep/x.ts", "docs/.hidden"]
    ) {
      await Deno.writeTextFile(join(ws, f), "");
    }
    const r = await call({ command: "view", path: ws + "/" });
    assert.equal(
      r.output,
      `Here's the files and directories up to 2 levels deep in ${ws}, excluding hidden items:\n` +
        [
          `${ws}/`,
          `${ws}/a.txt`,
          `${ws}/b.txt`,
          `${ws}/docs/`,
          `${ws}/src/`,
          `${ws}/src/deep/`,
          `${ws}/src/m.ts`,
          `${ws}/src/z.ts`,
        ].join("\n") +
        "\n\n4 hidden entries (names starting with `.`) were left out; view one by " +
        "its path, or use `ls -la` in bash, to see them.\n",
    );
    await Deno.remove(join(ws, "docs/.hidden"));
    await Deno.remove(join(ws, "src/.cache"));
    await Deno.remove(join(ws, ".env"));
    const one = await call({ command: "view", path: ws });
    assert.match(
      one.output!,
      /\n1 hidden entry \(a name starting with `\.`\) was left out; .* it\.\n$/,
    );
    const ranged = await call({ command: "view", path: ws, view_range: [1, 2] });
    assert.equal(
      ranged.error,
      "The `view_range` parameter is not allowed when `path` points to a directory.",
    );
  });
});

Deno.test("view: a directory listing does not follow symlinks out of the workspace", async () => {
  await withEditor(async ({ ws, call }) => {
    await using outsideDir = await tempDir();
    const outside = outsideDir.path;
    await Deno.writeTextFile(join(outside, "secret.txt"), "");
    await Deno.symlink(outside, join(ws, "link"));
    const r = await call({ command: "view", path: ws });
    assert.ok(r.output!.includes(`${ws}/link\n`));
    assert.ok(!r.output!.includes("secret.txt"));
  });
});

Deno.test("view: non-regular files are refused without blocking", async () => {
  await withEditor(async ({ ws, call }) => {
    const fifo = join(ws, "pipe");
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assert.ok(mk.success, `mkfifo failed: ${new TextDecoder().decode(mk.stderr)}`);
    const r = await call({ command: "view", path: fifo });
    assert.match(r.error!, /is not a regular file/);
  });
});
