/** Unit tests of the editor's text helpers: line breaks, numbering, visible whitespace. */
import assert from "node:assert/strict";
import {
  breakForRegion,
  foldLineBreaks,
  unfoldOffset,
} from "../../../src/tools/edit/line_breaks.ts";
import { numberLines, splitLines } from "../../../src/tools/edit/numbering.ts";
import { describeNearMisses, showWhitespace } from "../../../src/tools/edit/near_miss.ts";

Deno.test("foldLineBreaks: CRLF folded, lone CR kept, offsets map back", () => {
  const raw = "a\r\nb\nc\rd\r\n";
  const folded = foldLineBreaks(raw);
  assert.equal(folded.text, "a\nb\nc\rd\n");
  assert.deepEqual(folded.crlf, [1, 7]);
  assert.equal(unfoldOffset(folded, 0), 0);
  assert.equal(unfoldOffset(folded, 1), 1, "before a CRLF: before its CR");
  assert.equal(unfoldOffset(folded, 2), 3, "after a CRLF: after its LF");
  assert.equal(unfoldOffset(folded, 8), 10);
  assert.deepEqual(foldLineBreaks("plain\n"), { text: "plain\n", crlf: [] });
});

Deno.test("breakForRegion: majority inside, else the line's own break", () => {
  const f = foldLineBreaks("a\r\nb\r\nc\nd\ne");
  assert.equal(breakForRegion(f, 0, 5), "\r\n"); // a\nb\nc: two CRLF
  assert.equal(breakForRegion(f, 4, 8), "\n"); // c\nd: one LF
  assert.equal(breakForRegion(f, 2, 3), "\r\n"); // inside line b (ends CRLF)
  assert.equal(breakForRegion(f, 8, 9), "\n"); // last line e, no break: previous line's
  assert.equal(breakForRegion(foldLineBreaks("x"), 0, 1), "\n");
});

Deno.test("numberLines: cat -n format and whole-line clipping", () => {
  assert.equal(numberLines(["a", "\tb"], 1).text, "     1\ta\n     2\t\tb");
  assert.equal(numberLines(["x"], 123456).text, "123456\tx");
  const clipped = numberLines(["aaaa", "bbbb", "cccc"], 1, 25);
  assert.deepEqual([clipped.shown, clipped.clipped], [2, true]);
  assert.equal(numberLines(["z".repeat(100)], 1, 20).text.length, 20);
});

Deno.test("splitLines: CR of CRLF dropped, lone CR at the end kept", () => {
  assert.deepEqual(splitLines("a\r\nb\n"), ["a", "b"]);
  assert.deepEqual(splitLines("a\nb"), ["a", "b"]);
  assert.deepEqual(splitLines("a\r"), ["a\r"]);
  assert.deepEqual(splitLines(""), []);
  assert.deepEqual(splitLines("\n"), [""]);
});

Deno.test("showWhitespace: tabs everywhere, spaces only at the edges", () => {
  assert.equal(showWhitespace("\t  x  y \t"), "→··x  y·→");
  assert.equal(showWhitespace("a\tb"), "a→b");
  assert.equal(showWhitespace("   "), "···");
  assert.equal(showWhitespace("no\u00a0break"), "no⍽break");
});

Deno.test("describeNearMisses: copes with a huge one-line file quickly", () => {
  const text = "x".repeat(5_000_000);
  const start = performance.now();
  const hint = describeNearMisses(text, "const y = 1;");
  assert.match(hint, /No similar lines were found/);
  // Linear work takes well under a second; a quadratic scan of 5 MB would take minutes.
  assert.ok(performance.now() - start < 15_000);
});
