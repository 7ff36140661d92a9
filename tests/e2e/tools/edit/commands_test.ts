/** The editor's commands and their Trae-compatible messages. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertPassesAsNobody } from "../../../helpers/as_nobody.ts";
import { withEditor } from "../../../helpers/editor.ts";

Deno.test("paths: relative paths are refused with a workspace-based hint", async () => {
  await withEditor(async ({ ws, call }) => {
    const r = await call({ command: "view", path: "src/a.ts" });
    assert.equal(r.success, false);
    assert.equal(
      r.error,
      `The path src/a.ts is not an absolute path, it should start with \`/\`. Maybe you meant ` +
        `${join(ws, "src/a.ts")}?`,
    );
  });
});

Deno.test("paths: a missing path does not exist; a directory only takes view", async () => {
  await withEditor(async ({ ws, call }) => {
    const missing = join(ws, "nope.txt");
    for (
      const args of [
        { command: "view", path: missing },
        { command: "str_replace", path: missing, old_str: "a", new_str: "b" },
        { command: "insert", path: missing, insert_line: 0, new_str: "a" },
      ]
    ) {
      const r = await call(args);
      assert.equal(r.error, `The path ${missing} does not exist. Please provide a valid path.`);
    }
    await Deno.mkdir(join(ws, "dir"));
    const r = await call({ command: "str_replace", path: join(ws, "dir"), old_str: "a" });
    assert.equal(
      r.error,
      `The path ${join(ws, "dir")} is a directory and only the \`view\` command can be used on ` +
        `directories`,
    );
    const ins = await call({
      command: "insert",
      path: join(ws, "dir"),
      insert_line: 0,
      new_str: "",
    });
    assert.match(ins.error!, /is a directory and only the `view` command/);
  });
});

Deno.test("paths: arguments are validated before the tool runs", async () => {
  await withEditor(async ({ ws, call }) => {
    const r = await call({ command: "remove", path: join(ws, "a") });
    assert.equal(r.success, false);
    assert.match(r.error!, /`command` must be one of/);
    const missing = await call({ command: "view" });
    assert.match(missing.error!, /missing required argument `path`/);
  });
});

Deno.test("create: writes file_text verbatim, makes parents, refuses existing paths", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "a", "b", "new.txt");
    const text = "line 1\r\n\tline 2\nno final newline";
    const r = await call({ command: "create", path, file_text: text });
    assert.equal(r.output, `File created successfully at: ${path}`);
    assert.equal(await Deno.readTextFile(path), text);
    const again = await call({ command: "create", path, file_text: "other" });
    assert.equal(
      again.error,
      `File already exists at: ${path}. Cannot overwrite files using command \`create\`.`,
    );
    assert.equal(await Deno.readTextFile(path), text);
    const noText = await call({ command: "create", path: join(ws, "c.txt") });
    assert.equal(
      noText.error,
      "Parameter `file_text` is required and must be a string for command: create",
    );
    const empty = await call({ command: "create", path: join(ws, "empty.txt"), file_text: "" });
    assert.equal(empty.success, true);
    assert.equal((await Deno.stat(join(ws, "empty.txt"))).size, 0);
  });
});

Deno.test("create: a file under an existing file fails with Trae's write message", async () => {
  await withEditor(async ({ ws, call }) => {
    await Deno.writeTextFile(join(ws, "file"), "x");
    const path = join(ws, "file", "child.txt");
    const r = await call({ command: "create", path, file_text: "y" });
    assert.match(r.error!, new RegExp(`^Ran into .* while trying to write to ${path}$`));
  });
});

Deno.test("str_replace: replaces the single occurrence and shows a ±4 line snippet", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.py");
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const r = await call({ command: "str_replace", path, old_str: "line 10\n", new_str: "ten\n" });
    const snippet = [6, 7, 8, 9].map((n) => `${String(n).padStart(6)}\tline ${n}`)
      .concat([`    10\tten`])
      .concat([11, 12, 13, 14].map((n) => `${String(n).padStart(6)}\tline ${n}`));
    assert.equal(
      r.output,
      `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet ` +
        `of ${path}:\n${snippet.join("\n")}\nReview the changes and make sure they are as ` +
        `expected. Edit the file again if necessary.`,
    );
    assert.equal(
      await Deno.readTextFile(path),
      lines.map((l) => l === "line 10" ? "ten" : l).join("\n") + "\n",
    );
  });
});

Deno.test("str_replace: snippet near the top and bottom stays within the file", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "a\nb\nc");
    const r = await call({ command: "str_replace", path, old_str: "c", new_str: "C\nD" });
    assert.ok(r.output!.includes("\n     1\ta\n     2\tb\n     3\tC\n     4\tD\nReview"));
    assert.equal(await Deno.readTextFile(path), "a\nb\nC\nD");
  });
});

Deno.test("str_replace: omitted new_str deletes; empty and unchanged old_str are refused", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "keep\ndrop me\nkeep too\n");
    const del = await call({ command: "str_replace", path, old_str: "drop me\n" });
    assert.equal(del.success, true, del.error ?? "");
    assert.equal(await Deno.readTextFile(path), "keep\nkeep too\n");
    const nullNew = await call({ command: "str_replace", path, old_str: "too", new_str: null });
    assert.equal(nullNew.success, true);
    assert.equal(await Deno.readTextFile(path), "keep\nkeep \n");
    const empty = await call({ command: "str_replace", path, old_str: "", new_str: "x" });
    assert.match(empty.error!, /^No replacement was performed: `old_str` is empty/);
    const same = await call({ command: "str_replace", path, old_str: "keep", new_str: "keep" });
    assert.match(same.error!, /^No replacement was performed: `new_str` is the same as `old_str`/);
    const noOld = await call({ command: "str_replace", path, new_str: "x" });
    assert.equal(
      noOld.error,
      "Parameter `old_str` is required and should be a string for command: str_replace",
    );
    assert.equal(await Deno.readTextFile(path), "keep\nkeep \n");
  });
});

Deno.test("str_replace: several occurrences list each start line, multi-line included", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    const block = "if (a) {\n  b();\n}";
    await Deno.writeTextFile(path, `x\n${block}\ny\nz\n${block}\nw\n  b();\n`);
    const multi = await call({ command: "str_replace", path, old_str: block, new_str: "q" });
    assert.equal(
      multi.error,
      `No replacement was performed. Multiple occurrences of old_str \`${block}\` in lines ` +
        `[2, 7]. Please ensure it is unique: include enough surrounding lines in old_str that it ` +
        `matches exactly one place.`,
    );
    const single = await call({ command: "str_replace", path, old_str: "b();", new_str: "c();" });
    assert.match(single.error!, /Multiple occurrences of old_str `b\(\);` in lines \[3, 8, 11\]/);
    await Deno.writeTextFile(path, "aa aa\n");
    const twice = await call({ command: "str_replace", path, old_str: "aa", new_str: "b" });
    assert.match(twice.error!, /in lines \[1\] \(2 occurrences\)/);
  });
});

Deno.test("str_replace: a miss shows the closest lines with whitespace visible", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.go");
    await Deno.writeTextFile(path, "func main() {\n\tif ok {  \n\t\treturn\n\t}\n}\n");
    const r = await call({
      command: "str_replace",
      path,
      old_str: "    if ok {\n        return",
      new_str: "x",
    });
    assert.equal(r.success, false);
    const error = r.error!;
    assert.ok(
      error.startsWith(
        `No replacement was performed, old_str \`    if ok {\n        return\` did not appear ` +
          `verbatim in ${path}.`,
      ),
    );
    assert.match(error, /Closest match at lines 2-3 \(the same text except for whitespace\):/);
    assert.ok(error.includes("     2\t→if ok {··\n     3\t→→return"), error);
    assert.ok(error.includes("Your old_str, shown the same way:\n····if ok {\n········return"));
    assert.equal(await Deno.readTextFile(path), "func main() {\n\tif ok {  \n\t\treturn\n\t}\n}\n");
  });
});

Deno.test("str_replace: a miss with a typo points at the similar line", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.ts");
    const lines = Array.from({ length: 50 }, (_, i) => `const value${i} = compute(${i});`);
    await Deno.writeTextFile(path, lines.join("\n"));
    const r = await call({
      command: "str_replace",
      path,
      old_str: "const valeu17 = compute(17);",
      new_str: "x",
    });
    assert.match(r.error!, /Closest match at line 18 \(\d+% alike\):\n {4}18\tconst value17/);
  });
});

Deno.test("str_replace: nothing similar gets advice instead of noise", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "alpha\nbeta\n");
    const r = await call({ command: "str_replace", path, old_str: "zzzzqqqq", new_str: "x" });
    assert.match(r.error!, /No similar lines were found\. View the file/);
  });
});

Deno.test("insert: after line N, at the top, at the end; range errors", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "one\ntwo\n");
    const r = await call({ command: "insert", path, insert_line: 1, new_str: "one and a half" });
    assert.equal(
      r.output,
      `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet ` +
        `of the edited file:\n     1\tone\n     2\tone and a half\n     3\ttwo\nReview the ` +
        `changes and make sure they are as expected (correct indentation, no duplicate lines, ` +
        `etc). Edit the file again if necessary.`,
    );
    await call({ command: "insert", path, insert_line: 0, new_str: "zero\n" });
    await call({ command: "insert", path, insert_line: 4, new_str: "three\nfour" });
    assert.equal(await Deno.readTextFile(path), "zero\none\none and a half\ntwo\nthree\nfour\n");
    const bad = await call({ command: "insert", path, insert_line: 7, new_str: "x" });
    assert.equal(
      bad.error,
      "Invalid `insert_line` parameter: 7. It should be within the range of lines of the file: " +
        "[0, 6]",
    );
    const negative = await call({ command: "insert", path, insert_line: -1, new_str: "x" });
    assert.match(negative.error!, /^Invalid `insert_line` parameter: -1/);
    const noLine = await call({ command: "insert", path, new_str: "x" });
    assert.equal(
      noLine.error,
      "Parameter `insert_line` is required and should be integer for command: insert",
    );
    const noText = await call({ command: "insert", path, insert_line: 0 });
    assert.equal(noText.error, "Parameter `new_str` is required for command: insert");
    const notInt = await call({ command: "insert", path, insert_line: 1.5, new_str: "x" });
    assert.match(notInt.error!, /`insert_line` must be an integer/);
  });
});

Deno.test("insert: into an empty file, and an empty new_str inserts an empty line", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await Deno.writeTextFile(path, "");
    assert.equal(
      (await call({ command: "insert", path, insert_line: 0, new_str: "x" })).success,
      true,
    );
    assert.equal(await Deno.readTextFile(path), "x\n");
    await call({ command: "insert", path, insert_line: 1, new_str: "" });
    assert.equal(await Deno.readTextFile(path), "x\n\n");
  });
});

Deno.test("edits keep the file's mode", async () => {
  await withEditor(async ({ ws, call }) => {
    for (const mode of [0o755, 0o640, 0o600]) {
      const path = join(ws, `script-${mode.toString(8)}.sh`);
      await Deno.writeTextFile(path, "#!/bin/sh\necho hi\n");
      await Deno.chmod(path, mode);
      await call({ command: "str_replace", path, old_str: "hi", new_str: "hello" });
      assert.equal((await Deno.stat(path)).mode! & 0o7777, mode);
      await call({ command: "insert", path, insert_line: 2, new_str: "exit 0" });
      assert.equal((await Deno.stat(path)).mode! & 0o7777, mode);
      await call({ command: "undo_edit", path });
      assert.equal((await Deno.stat(path)).mode! & 0o7777, mode);
      assert.equal(await Deno.readTextFile(path), "#!/bin/sh\necho hello\n");
    }
  });
});

Deno.test("edits through a symlink inside the workspace change the target and keep the link", async () => {
  await withEditor(async ({ ws, call }) => {
    const target = join(ws, "real.txt");
    const link = join(ws, "link.txt");
    await Deno.writeTextFile(target, "old\n");
    await Deno.symlink(target, link);
    const r = await call({ command: "str_replace", path: link, old_str: "old", new_str: "new" });
    assert.equal(r.success, true, r.error ?? "");
    assert.match(r.output!, new RegExp(`The file ${link} has been edited`));
    assert.equal((await Deno.lstat(link)).isSymlink, true);
    assert.equal(await Deno.readTextFile(target), "new\n");
    await call({ command: "undo_edit", path: target });
    assert.equal(await Deno.readTextFile(target), "old\n", "undo is keyed by the real file");
  });
});

Deno.test("edits leave no temporary files behind", async () => {
  await withEditor(async ({ ws, call }) => {
    const path = join(ws, "f.txt");
    await call({ command: "create", path, file_text: "a\n" });
    await call({ command: "insert", path, insert_line: 1, new_str: "b" });
    await call({ command: "str_replace", path, old_str: "b", new_str: "c" });
    await call({ command: "undo_edit", path });
    const names = [];
    for await (const e of Deno.readDir(ws)) names.push(e.name);
    assert.deepEqual(names, ["f.txt"]);
  });
});

Deno.test({
  name: "a read-only file is not edited",
  fn: async () => {
    // Root may write anything, so there is nothing to refuse: root runs this test as nobody.
    if (Deno.uid() === 0) {
      await assertPassesAsNobody(
        "tests/e2e/tools/edit/commands_test.ts",
        "a read-only file is not edited",
      );
      return;
    }
    await withEditor(async ({ ws, call }) => {
      const path = join(ws, "ro.txt");
      await Deno.writeTextFile(path, "a\n");
      await Deno.chmod(path, 0o444);
      const r = await call({ command: "str_replace", path, old_str: "a", new_str: "b" });
      assert.match(r.error!, /is not writable/);
      assert.equal(await Deno.readTextFile(path), "a\n");
    });
  },
});
