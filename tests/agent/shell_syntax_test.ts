/**
 * The shell reader behind the approval rules: it ends quickly on any input (a hostile model
 * writes the command line), and what it cannot read it says, never guesses.
 */
import assert from "node:assert/strict";
import { parseShell } from "../../src/agent/shell_syntax.ts";

/** A small seeded generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("the reader ends, quickly, on any mix of shell syntax", () => {
  const pieces = [
    "rm",
    " ",
    "x",
    ";",
    "&",
    "|",
    "(",
    ")",
    "{",
    "}",
    "$",
    "$(",
    "`",
    "'",
    '"',
    "\\",
    "\n",
    "<",
    ">",
    "<<",
    "EOF",
    "<<'E'",
    "#",
    "=",
    "[",
    "]",
    "*",
    "?",
    "${",
    "((",
    "))",
    "2>&1",
    "bash -c ",
    "eval ",
    "case ",
    "in ",
    "esac",
    "$'",
    "\t",
    "function ",
    "f()",
    "<(",
    ">(",
  ];
  const next = random(48);
  const started = performance.now();
  for (let n = 0; n < 20000; n++) {
    let line = "";
    const length = 1 + Math.floor(next() * 30);
    for (let i = 0; i < length; i++) line += pieces[Math.floor(next() * pieces.length)];
    const parsed = parseShell(line);
    assert.ok(Array.isArray(parsed.commands), JSON.stringify(line));
  }
  // 20,000 lines well inside the budget of a loaded 2-core machine.
  assert.ok(performance.now() - started < 60_000);
});

Deno.test("the reader gives words as the shell would, and null where only the run knows", () => {
  const words = (line: string) => parseShell(line).commands.map((c) => c.words);
  assert.deepEqual(words(`echo 'a b' "c d" e\\ f`), [["echo", "a b", "c d", "e f"]]);
  assert.deepEqual(words(`echo "a\\"b" '\\n'`), [["echo", 'a"b', "\\n"]]);
  assert.deepEqual(words("echo $HOME ${X} *.ts a{b,c}"), [["echo", null, null, null, null]]);
  assert.deepEqual(words("[ -f x ] && echo {} a=b"), [["[", "-f", "x", "]"], [
    "echo",
    "{}",
    "a=b",
  ]]);
  assert.deepEqual(words("echo a # rm x\nls"), [["echo", "a"], ["ls"]]);
  const assigned = parseShell("A=1 B=$(x) cmd arg").commands;
  assert.deepEqual(assigned.map((c) => c.assignments), [[], ["A=1", null]]);
  assert.deepEqual(parseShell("echo hi > out").commands[0].writes, true);
  assert.deepEqual(parseShell("echo hi 2>/dev/null >&2").commands[0].writes, false);
  for (const line of ["echo 'a", 'echo "a', "echo $(a", "echo `a", "cat <<E\nx", "case a in"]) {
    assert.ok(parseShell(line).unjudged.length > 0, `unreadable: ${JSON.stringify(line)}`);
  }
});
