/** The one terminal sanitiser (finding 11 of issue 28), as the hostile model would feed it. */
import assert from "node:assert/strict";
import { terminalLine, terminalText } from "../../src/policy/terminal_text.ts";
import { visible } from "../../src/gate/preview.ts";
import { printable } from "../../src/cli/console/printable.ts";

const RAW =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

const ATTACKS = [
  "\x1b]0;title\x07",
  "\x1b]52;c;cm0gLXJmIH4=\x1b\\",
  "\x1b[2J\x1b[H",
  "\x9b2J",
  "\x9d0;title\x9c",
  "\x85next line",
  "rm -rf ~\rls",
  "ls \u202e;fdp/cte tac",
  "ls\u2066 \u2069\u200b\u200d\u2060\ufeff\u061c",
];

Deno.test("every rendering leaves no raw control, ESC, C1, bidi or zero-width character", () => {
  for (const attack of ATTACKS) {
    for (
      const shown of [
        terminalText(attack),
        terminalLine(attack),
        printable(attack),
        visible(attack),
      ]
    ) {
      assert.doesNotMatch(shown, RAW, `${JSON.stringify(attack)} → ${JSON.stringify(shown)}`);
    }
    assert.doesNotMatch(terminalLine(`${attack}\n`), /\n/);
  }
});

Deno.test("newlines and tabs stay where the context keeps them; the approval spells each code", () => {
  assert.equal(terminalText("a\tb\nc"), "a\tb\nc");
  assert.equal(terminalText("\x1b[31mred\x9b"), "␛[31mred�");
  assert.equal(visible("ls \x9b\u202e\u200b"), "ls \\x9b\\u202e\\u200b");
  assert.equal(visible("a\tb\nc"), "a\tb\nc");
});
