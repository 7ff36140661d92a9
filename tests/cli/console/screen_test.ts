/**
 * The composer line under a running turn's output (src/cli/console/screen.ts), on a recorded
 * byte stream: erased before each output chunk and drawn after it, drawn below an unfinished
 * output line which is drawn again before it continues, held off while a question is up.
 */
import assert from "node:assert/strict";
import { columns, fitComposer, Screen } from "../../../src/cli/console/screen.ts";

function recorder(width = 40) {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  const screen = new Screen((b) => chunks.push(decoder.decode(b)), () => width);
  return { screen, text: () => chunks.join("") };
}

Deno.test("screen: without a composer line the output passes through unchanged", () => {
  const { screen, text } = recorder();
  screen.write("one\ntwo");
  screen.write(" more\n");
  assert.equal(text(), "one\ntwo more\n");
});

Deno.test("screen: the composer line is erased before output and drawn again after it", () => {
  const { screen, text } = recorder();
  let line = "next> hel";
  screen.compose(() => ({ text: line, cursor: line.length }));
  assert.equal(text(), "next> hel");
  screen.write("● bash ls\n");
  assert.equal(text(), "next> hel\r\x1b[2K● bash ls\nnext> hel");
  line = "next> hello";
  screen.redraw();
  assert.ok(text().endsWith("next> hel\r\x1b[2Knext> hello"));
  // Removed: erased, and nothing drawn after.
  screen.compose(undefined);
  screen.write("done\n");
  assert.ok(text().endsWith("next> hello\r\x1b[2Kdone\n"));
});

Deno.test("screen: under an unfinished line the composer goes below, and the line is drawn again before it goes on", () => {
  const { screen, text } = recorder(10);
  screen.compose(() => ({ text: "next> x", cursor: 7 }));
  const start = text().length;
  screen.write("The answer is");
  // 13 columns on a 10-column terminal: two rows to climb back to.
  assert.equal(text().slice(start), "\r\x1b[2KThe answer is\nnext> x");
  const mid = text().length;
  screen.write(" 42.\n");
  assert.equal(text().slice(mid), "\r\x1b[2K\x1b[2A\r\x1b[JThe answer is 42.\nnext> x");
});

Deno.test("screen: a hold takes the composer off until released; the cursor is then at a row's start", () => {
  const { screen, text } = recorder();
  screen.compose(() => ({ text: "next> y", cursor: 7 }));
  const release = screen.hold();
  screen.write("Approve? ");
  assert.ok(text().endsWith("next> y\r\x1b[2KApprove? "), JSON.stringify(text()));
  release();
  release();
  assert.ok(text().endsWith("Approve? next> y"));
});

Deno.test("screen: the cursor is put back where it is on the line", () => {
  const { screen, text } = recorder();
  screen.compose(() => ({ text: "next> abcdef", cursor: 8 }));
  assert.equal(text(), "next> abcdef\x1b[4D");
});

Deno.test("screen: columns count wide characters twice and escapes not at all", () => {
  assert.equal(columns("abc"), 3);
  assert.equal(columns("\x1b[32m✓ ok\x1b[0m"), 4);
  assert.equal(columns("日本"), 4);
});

Deno.test("screen: a long line fits one row around the cursor, newlines shown as ↵", () => {
  const fitted = fitComposer("next> ", "a".repeat(100) + "END", 103, 40);
  assert.ok(columns(fitted.text) <= 39, fitted.text);
  assert.ok(fitted.text.startsWith("next> …") && fitted.text.endsWith("END"), fitted.text);
  assert.equal(fitted.cursor, columns(fitted.text));
  const lines = fitComposer("next> ", "one\ntwo", 7, 80);
  assert.equal(lines.text, "next> one↵two");
});
