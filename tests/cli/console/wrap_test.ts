/**
 * Console output wrapped at word boundaries (src/cli/console/wrap.ts), as a terminal of each
 * width shows it: no word is broken across rows (a word longer than a row still is), wrapped
 * rows keep their line's indent, colour and wide characters count as the terminal counts them,
 * and a word streamed in pieces that would cross the edge is taken back and moved down whole.
 */
import assert from "node:assert/strict";
import { columns, fitRow, WordWrap, wrapText } from "../../../src/cli/console/wrap.ts";
import { Screen } from "../../../src/cli/console/screen.ts";
import { brokenWords, terminalRows } from "../../helpers/terminal_rows.ts";

const WIDTHS = [60, 80, 120, 160];

const APPROVAL = [
  "Approve this command?",
  "$ cd packages/server && deno test --allow-read --allow-write --allow-net tests/integration/",
  '[y]es · [n]o, with a reason for the model ("n use the test script") · [a]lways for ' +
  "`deno test` (this session or this project) · [s]ession: ask nothing more in this session",
].join("\n");

/** Every row within `width`, and no word of `text` broken across two of them. */
function assertLaidOut(rows: string[], text: string, width: number): void {
  for (const row of rows) assert.ok(columns(row) <= width, `${width}: ${row}`);
  assert.deepEqual(brokenWords(rows, text), [], `${width}:\n${rows.join("\n")}`);
  // Nothing lost or added: the same words in the same order.
  const words = (t: string) => t.split(/\s+/).filter(Boolean).join(" ");
  assert.equal(words(rows.join(" ")), words(text));
}

Deno.test("wrap: the approval question at 60, 80, 120 and 160 columns breaks only between words", () => {
  for (const width of WIDTHS) {
    assertLaidOut(terminalRows(wrapText(APPROVAL, width), width), APPROVAL, width);
  }
  // Where it fits, nothing changes.
  assert.equal(wrapText("[y]es · [n]o", 80), "[y]es · [n]o");
});

Deno.test("wrap: a word longer than a row breaks where the row ends; a table's rows keep their column", () => {
  const path = `see /${"very-long-directory-name/".repeat(5)}file.ts for the details`;
  const rows = terminalRows(wrapText(path, 60), 60);
  // It could not fit any row: it fills this one and goes on below.
  assert.match(rows[0], /^see \/very-long/);
  assert.equal(columns(rows[0]), 60, rows.join("\n"));
  assert.match(rows.at(-1)!, /for the details$/);

  const help = "  /compact [instructions]           replace the conversation by the model's " +
    "summary of it (frees context)";
  const table = terminalRows(wrapText(help, 60), 60);
  assert.equal(table.length, 3, table.join("\n"));
  for (const row of table.slice(1)) assert.match(row, /^ {36}\S/, table.join("\n"));
  // A tool's output keeps its gutter.
  const output = terminalRows(wrapText(`    │ ${"word ".repeat(30)}`, 60), 60);
  for (const row of output) assert.match(row, /^ {4}│ word/, output.join("\n"));
});

Deno.test("wrap: colour takes no columns and wide characters two", () => {
  const green = (t: string) => `\x1b[32m${t}\x1b[0m`;
  const text = Array.from({ length: 12 }, (_, i) => green(`word${i}`)).join(" ");
  const wrapped = wrapText(text, 30);
  const rows = terminalRows(wrapped, 30);
  // deno-lint-ignore no-control-regex
  assertLaidOut(rows, text.replace(/\x1b\[\d+m/g, ""), 30);
  assert.equal(rows[0], "word0 word1 word2 word3 word4");
  assert.ok(wrapped.includes("\x1b[32m"), "the colour is kept");

  const cjk = "日本語のテキスト ".repeat(6).trim();
  const wide = terminalRows(wrapText(cjk, 36), 36);
  assert.deepEqual(wide, [
    "日本語のテキスト 日本語のテキスト",
    "日本語のテキスト 日本語のテキスト",
    "日本語のテキスト 日本語のテキスト",
  ]);
});

Deno.test("wrap: a word streamed in pieces that would cross the edge goes down whole", () => {
  const sentence = "The model streams its answer in small pieces, and words get split " +
    "between them quite often, as tokens do not end where words end.\n";
  let movedBack = 0;
  for (const size of [2, 3, 5, 7, 11]) {
    const wrap = new WordWrap();
    let out = "";
    for (let i = 0; i < sentence.length; i += size) {
      out += wrap.push(sentence.slice(i, i + size), 40);
    }
    assertLaidOut(terminalRows(out, 40), sentence, 40);
    // A word begun in an earlier piece is cleared from its row before it is written below.
    // deno-lint-ignore no-control-regex
    if (/\x1b\[\d+G\x1b\[K\n/.test(out)) movedBack++;
  }
  assert.ok(movedBack >= 3, `a word was taken back from the screen ${movedBack} time(s)`);
});

Deno.test("wrap: the screen wraps console output at its width, and starts over after a prompt", () => {
  const chunks: string[] = [];
  const screen = new Screen((b) => chunks.push(new TextDecoder().decode(b)), () => 60, () => 60);
  screen.write(`${APPROVAL}\n`);
  assertLaidOut(terminalRows(chunks.join(""), 60), APPROVAL, 60);
  // Off a terminal (no width), the text passes unchanged.
  const plain: string[] = [];
  const off = new Screen((b) => plain.push(new TextDecoder().decode(b)), () => 60);
  off.write(`${APPROVAL}\n`);
  assert.equal(plain.join(""), `${APPROVAL}\n`);
});

Deno.test("fitRow: one row clipped to the width, … last", () => {
  assert.equal(fitRow("short", 10), "short");
  assert.equal(fitRow("a longer row of text", 10), "a longer …");
  assert.equal(columns(fitRow("日本語のテキスト", 7)), 7);
});

Deno.test("wrap: a megabyte of output (a large /diff) is laid out in linear time", () => {
  const line =
    "+    const value = compute(alpha, beta) + other_call(gamma) // and a comment here\n";
  const text = line.repeat(Math.ceil(1_000_000 / line.length));
  const started = performance.now();
  const rows = wrapText(text, 80).split("\n");
  const seconds = (performance.now() - started) / 1000;
  // Taking words back by copying what was written made it quadratic: over 40 s here.
  assert.ok(seconds < 15, `${seconds.toFixed(1)} s`);
  assert.equal(rows.length, 2 * text.split("\n").length - 1);
});
