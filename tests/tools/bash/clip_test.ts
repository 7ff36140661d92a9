/** The clipping marker counts exactly what it leaves out. */
import assert from "node:assert/strict";
import { clipOutput, countNewlines } from "../../../src/tools/bash/clip.ts";

function clip(text: string, limit: number): string {
  return clipOutput({
    label: "stdout",
    head: text.slice(0, limit),
    tail: text.slice(-limit),
    totalChars: text.length,
    totalNewlines: countNewlines(text),
    savedPath: "/tmp/out dir/1-stdout.txt",
    savedComplete: true,
    savedBytes: new TextEncoder().encode(text).length,
  }, limit);
}

function parts(shown: string) {
  const m = shown.match(/\[\.\.\. (\d+) characters omitted \(([^)]*)\)\. (.*) \.\.\.\]\n/)!;
  assert.ok(m, shown);
  return {
    head: shown.slice(0, m.index),
    tail: shown.slice(m.index! + m[0].length),
    omitted: Number(m[1]),
    where: m[2],
    rest: m[3],
  };
}

Deno.test("clip: whole lines, exact counts, and the line range left out", () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}\n`).join("");
  const shown = clip(lines, 200);
  const p = parts(shown);
  assert.ok(lines.startsWith(p.head) && p.head.endsWith("\n"));
  assert.ok(lines.endsWith(p.tail));
  assert.equal(p.head.length + p.omitted + p.tail.length, lines.length);
  const first = countNewlines(p.head) + 1;
  const last = 100 - countNewlines(p.tail);
  assert.equal(p.where, `lines ${first}-${last} of 100`);
  assert.ok(p.tail.startsWith(`line ${last + 1}\n`));
  assert.match(p.rest, /The full stdout \(\d+ characters, 100 lines\) is saved in/);
  assert.match(p.rest, /sed -n '\d+,\d+p' '\/tmp\/out dir\/1-stdout\.txt'/, "path is quoted");
});

Deno.test("clip: one long line is cut by characters", () => {
  const text = "x".repeat(10_000);
  const p = parts(clip(text, 1000));
  assert.ok(p.head.endsWith("x\n"), "a line break is added before the marker");
  p.head = p.head.slice(0, -1);
  assert.equal(p.head.length + p.omitted + p.tail.length, 10_000);
  assert.equal(p.head.length, 500);
  assert.equal(p.where, "part of line 1");
});

Deno.test("clip: surrogate pairs are not split", () => {
  const text = "😀".repeat(5000);
  const p = parts(clip(text, 1001));
  p.head = p.head.slice(0, -1);
  assert.doesNotMatch(p.head + p.tail, /[\ud800-\udbff](?![\udc00-\udfff])/);
  assert.doesNotMatch(p.head + p.tail, /(?<![\ud800-\udbff])[\udc00-\udfff]/);
  assert.equal(p.head.length + p.omitted + p.tail.length, text.length);
});

Deno.test("clip: a partly saved output says so", () => {
  const text = "y\n".repeat(1000);
  const shown = clipOutput({
    label: "stderr",
    head: text.slice(0, 100),
    tail: text.slice(-100),
    totalChars: text.length,
    totalNewlines: 1000,
    savedPath: "/tmp/x",
    savedComplete: false,
    savedBytes: 64,
  }, 100);
  assert.match(shown, /The first 64 bytes of the stderr \(2000 characters in all/);
});
