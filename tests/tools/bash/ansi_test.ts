/** Escape sequences are removed, also when a sequence is split between reads. */
import assert from "node:assert/strict";
import { AnsiStripper, stripAnsi } from "../../../src/tools/bash/ansi.ts";

const SAMPLES: [string, string][] = [
  ["\x1b[1;31mred\x1b[0m", "red"],
  ["\x1b[38;5;245mgrey\x1b[m", "grey"],
  ["\x1b[2K\x1b[1Gprogress", "progress"],
  ["\x1b]0;window title\x07text", "text"],
  ["\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\", "link"],
  ["\x1bP1$r0m\x1b\\after dcs", "after dcs"],
  ["\x1b(Bcharset", "charset"],
  ["\x1b=keypad\x1b>", "keypad"],
  ["\x9b31mc1\x9b0m", "c1"],
  ["lone \x1b", "lone "],
  ["plain [31m text", "plain [31m text"],
  ["tab\tand\r\nnewlines\n", "tab\tand\r\nnewlines\n"],
];

Deno.test("stripAnsi removes colours, cursor moves, titles and hyperlinks", () => {
  for (const [input, expected] of SAMPLES) assert.equal(stripAnsi(input), expected, input);
});

Deno.test("AnsiStripper gives the same result for every split point", () => {
  const text = SAMPLES.map(([input]) => input).join("|");
  const expected = stripAnsi(text);
  for (let cut = 0; cut <= text.length; cut++) {
    const s = new AnsiStripper();
    const out = s.push(text.slice(0, cut)) + s.push(text.slice(cut)) + s.flush();
    assert.equal(out, expected, `split at ${cut}`);
  }
});

Deno.test("AnsiStripper does not hold back text without escapes", () => {
  const s = new AnsiStripper();
  assert.equal(s.push("hello "), "hello ");
  assert.equal(s.push("\x1b[3"), "");
  assert.equal(s.push("1mred"), "red");
  assert.equal(s.flush(), "");
});
