import * as assert from "node:assert/strict";
import { block, text } from "../../src/report/escape.ts";

Deno.test("report escape: HTML's special characters become entities", () => {
  assert.equal(
    text(`<script>alert("x")</script> & 'q'`),
    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;",
  );
  assert.equal(text(`" onmouseover="x`), "&quot; onmouseover=&quot;x");
});

Deno.test("report escape: null, undefined and numbers are text too", () => {
  assert.equal(text(null), "");
  assert.equal(text(undefined), "");
  assert.equal(text(42), "42");
});

Deno.test("report escape: escape sequences and control characters are spelled out", () => {
  assert.equal(text("\x1b[31mred\x1b[0m"), "\\e[31mred\\e[0m");
  assert.equal(text("a\x00b\x07c\x7fd"), "a\\x00b\\x07c\\x7fd");
  // Tabs and newlines stay: they are how output is laid out.
  assert.equal(text("a\tb\nc"), "a\tb\nc");
  // Bidirectional overrides would show a name reversed.
  assert.equal(text("txt\u202eexe.sh"), "txt\\u{202e}exe.sh");
  assert.equal(text("a\u2028b"), "a\\u{2028}b");
});

Deno.test("report escape: a lone surrogate (a stray byte) shows as a replacement code", () => {
  assert.equal(text("x\udcffy"), "x\\u{fffd}y");
  assert.equal(text("\ud83d"), "\\u{fffd}");
  // A whole pair is a character and stays.
  assert.equal(text("ok \u{1f600}"), "ok \u{1f600}");
});

Deno.test("report escape: a 1 MB line is cut with a note saying how much", () => {
  const shown = block("A".repeat(1_000_000) + "\nnext", { line: 2000, total: 2_000_000 });
  assert.ok(shown.length < 3000, `kept ${shown.length} characters`);
  assert.match(shown, /… 998000 more characters on this line cut/);
  assert.match(shown, /\nnext$/);
});

Deno.test("report escape: a long block is cut with a note, and what is kept is escaped", () => {
  const shown = block("<b>\n".repeat(10_000), { line: 100, total: 400 });
  const rest = /… (\d+) more characters cut<\/span>$/.exec(shown);
  assert.ok(rest && Number(rest[1]) > 39_000, shown.slice(-200));
  assert.ok(!shown.includes("<b>"));
  assert.ok(shown.includes("&lt;b&gt;"));
});
