/**
 * The `insert` rule: every line the model wrote lands in the file, at the start, in the middle and
 * at the end (with and without a final newline). Cases include the one replayed from a published
 * agent run: `a\nb` + insert `X\n\n` after line 2 once gave `a\nb\nX\n`, losing the blank line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withEditor } from "../../helpers/editor.ts";

// [file, insert_line, new_str, expected file]
const CASES: [string, number, string, string][] = [
  ["a\nb\n", 0, "X", "X\na\nb\n"],
  ["a\nb\n", 0, "X\n", "X\na\nb\n"],
  ["a\nb\n", 0, "X\n\n", "X\n\na\nb\n"],
  ["a\nb\n", 0, "", "\na\nb\n"],
  ["a\nb\n", 1, "X\n\n", "a\nX\n\nb\n"],
  ["a\nb\n", 1, "\nX", "a\n\nX\nb\n"],
  ["a\nb\n", 2, "X", "a\nb\nX\n"],
  ["a\nb\n", 2, "X\n\n", "a\nb\nX\n\n"],
  ["a\nb", 2, "X", "a\nb\nX"],
  ["a\nb", 2, "X\n", "a\nb\nX\n"],
  ["a\nb", 2, "X\n\n", "a\nb\nX\n\n"],
  ["a\nb", 2, "X\nY", "a\nb\nX\nY"],
  ["a\nb", 1, "X\n\n", "a\nX\n\nb"],
  ["a\r\nb", 2, "X\n\n", "a\r\nb\r\nX\r\n\r\n"],
  ["a\r\nb\r\n", 1, "X\nY\n", "a\r\nX\r\nY\r\nb\r\n"],
  ["", 0, "X", "X\n"],
  ["", 0, "X\n\n", "X\n\n"],
];

// The lines `new_str` stands for: split at `\n`, one trailing `\n` only ending the last line.
function modelLines(newStr: string): string[] {
  const lines = newStr.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines;
}

Deno.test("insert: every line of new_str is kept, in every position", async () => {
  await withEditor(async ({ ws, call }) => {
    for (const [i, [file, line, newStr, expected]] of CASES.entries()) {
      const label = `${JSON.stringify(file)} +${line} ${JSON.stringify(newStr)}`;
      const path = join(ws, `f${i}.txt`);
      await Deno.writeTextFile(path, file);
      const r = await call({ command: "insert", path, insert_line: line, new_str: newStr });
      assert.equal(r.success, true, `${label}: ${r.error}`);
      const result = await Deno.readTextFile(path);
      assert.equal(result, expected, label);
      // Independently of the table: the model's lines follow line `line` of the file.
      const lines = result.replaceAll("\r\n", "\n").split("\n");
      assert.deepEqual(
        lines.slice(line, line + modelLines(newStr).length),
        modelLines(newStr),
        label,
      );
      const undo = await call({ command: "undo_edit", path });
      assert.equal(undo.success, true, label);
      assert.equal(await Deno.readTextFile(path), file, `${label}: undo`);
    }
  });
});
