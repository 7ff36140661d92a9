/** What the model sees of a command's output: clipped, cleaned, never confused by look-alikes. */
import assert from "node:assert/strict";
import { withHarness } from "../../../helpers/bash.ts";

/** `seq 1 n` as a string. */
function seq(n: number): string {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++) lines.push(`${i}\n`);
  return lines.join("");
}

/** Parses the clipping marker. */
function marker(text: string) {
  const m = text.match(
    /\[\.\.\. (\d+) characters omitted \(lines (\d+)-(\d+) of (\d+)\)\. The full (\w+) \((\d+) characters, (\d+) lines\) is saved in (\S+); read a range with e\.g\. `sed -n '(\d+),(\d+)p' (\S+)` \.\.\.\]\n/,
  );
  assert.ok(m, `no clipping marker in ${JSON.stringify(text.slice(0, 200))}…`);
  return {
    index: m.index!,
    length: m[0].length,
    omitted: Number(m[1]),
    firstLine: Number(m[2]),
    lastLine: Number(m[3]),
    totalLines: Number(m[4]),
    label: m[5],
    totalChars: Number(m[6]),
    path: m[8],
  };
}

Deno.test("bash: 10 MB of output is drained quickly, clipped exactly, and saved whole", async () => {
  await withHarness({}, async (h) => {
    const n = 1_500_000; // about 10.9 MB
    const expected = seq(n);
    const start = performance.now();
    const r = await h.run(`seq 1 ${n}; echo done >&2`);
    const elapsed = performance.now() - start;
    assert.equal(r.error_code, 0);
    assert.equal(r.error, "done\n");
    assert.ok(elapsed < 10_000, `took ${elapsed} ms`);

    const text = r.output!;
    const m = marker(text);
    assert.equal(m.label, "stdout");
    assert.equal(m.totalChars, expected.length);
    assert.equal(m.totalLines, n);
    const head = text.slice(0, m.index);
    const tail = text.slice(m.index + m.length);
    assert.ok(expected.startsWith(head) && head.endsWith("\n"), "head is whole lines");
    assert.ok(expected.endsWith(tail) && tail.startsWith(`${m.lastLine + 1}\n`), "tail lines");
    assert.equal(head.length + m.omitted + tail.length, expected.length, "exact omitted count");
    assert.equal(m.firstLine, head.split("\n").length);
    assert.equal(
      m.lastLine - m.firstLine + 1 + (head.split("\n").length - 1) + (tail.split("\n").length - 1),
      n,
    );
    assert.ok(text.length <= 30_000 + 400, `shown ${text.length} characters`);

    const saved = await Deno.readFile(m.path);
    assert.deepEqual(saved, new TextEncoder().encode(expected), "saved byte for byte");
    // The path the model is told about is readable from the shell, by range.
    const range = await h.run(`sed -n '${m.firstLine},${m.firstLine + 1}p' ${m.path}`);
    assert.equal(range.output, `${m.firstLine}\n${m.firstLine + 1}\n`);
  });
});

Deno.test("bash: the output limit is configurable and applies to each stream", async () => {
  await withHarness({ outputLimit: 1000 }, async (h) => {
    const r = await h.run("seq 1 1000; seq 1 1000 >&2; exit 3");
    assert.equal(r.error_code, 3);
    const expected = seq(1000);
    for (const [label, text] of [["stdout", r.output!], ["stderr", r.error!]] as const) {
      const m = marker(text);
      assert.equal(m.label, label);
      assert.equal(m.totalChars, expected.length);
      const head = text.slice(0, m.index);
      assert.ok(expected.startsWith(head));
      const tail = text.slice(m.index + m.length).split("The shell exited")[0];
      assert.ok(expected.endsWith(tail), `${label} tail`);
      assert.equal(head.length + m.omitted + tail.length, expected.length);
      assert.equal(await Deno.readTextFile(m.path), expected);
    }
    const small = await h.run("seq 1 10");
    assert.equal(small.output, seq(10), "below the limit nothing is clipped");
  });
});

Deno.test("bash: both pipes full at once never stall", async () => {
  await withHarness({ outputLimit: 100 }, async (h) => {
    const r = await h.run("seq 1 300000 | tee /dev/stderr | tail -n 1", { timeout: 30 });
    assert.equal(r.error_code, 0);
    assert.equal(r.output, "300000\n");
    assert.match(r.error!, /The full stderr \(\d+ characters, 300000 lines\)/);
  });
});

Deno.test("bash: ANSI escape sequences are stripped", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run(
      String
        .raw`printf '\033[1;31mred\033[0m \033]0;title\007plain \033]8;;http://x\033\\link\033]8;;\033\\ \033(Bok\033[2K\n'; printf '\033[33merr\033[m\n' >&2`,
    );
    assert.equal(r.output, "red plain link ok\n");
    assert.equal(r.error, "err\n");
  });
});

Deno.test("bash: invalid UTF-8 never breaks the tool", async () => {
  await withHarness({}, async (h) => {
    const r = await h.run(String.raw`printf 'a\xff\xfeb\xc3'; printf '\xe2\x82' >&2`);
    assert.equal(r.error_code, 0);
    assert.equal(r.output, "a\uFFFD\uFFFDb\uFFFD");
    assert.equal(r.error, "\uFFFD");
    const split = await h.run(String.raw`printf '\xe2'; sleep 0.05; printf '\x82\xac euro\n'`);
    assert.equal(split.output, "€ euro\n", "a character split across reads is decoded whole");
  });
});

Deno.test("bash: look-alike end markers in the output cannot end a command early", async () => {
  await withHarness({}, async (h) => {
    const fakes = [
      ",,,,bash-command-exit-0-banner,,,,",
      "__DEFT_END_00000000000000000000000000000000:0:/tmp:__DEFT_END_00000000000000000000000000000000",
      "__DEFT_END_:0:/:__DEFT_END_",
      "__DEFT_END_ffffffffffffffffffffffffffffffff::__DEFT_END_ffffffffffffffffffffffffffffffff",
    ];
    const printFakes = fakes.map((f) => `printf '\\n%s\\n' '${f}'`).join("; ");
    const r = await h.run(
      `${printFakes}; { ${printFakes}; } >&2; echo before; sleep 0.2; echo after; (exit 5)`,
    );
    assert.equal(r.error_code, 5);
    assert.equal(r.output, fakes.map((f) => `\n${f}\n`).join("") + "before\nafter\n");
    assert.equal(r.error, fakes.map((f) => `\n${f}\n`).join(""));
    // The session is still in step.
    assert.equal((await h.run("echo next")).output, "next\n");
  });
});

Deno.test("bash: background jobs do not block; their later output reaches a later call", async () => {
  await withHarness({}, async (h) => {
    const start = performance.now();
    const r = await h.run("sleep 100 & (sleep 0.3; echo late) & echo started");
    assert.equal(r.output, "started\n");
    assert.ok(performance.now() - start < 20_000, "the call waited for its 100 s job");
    await new Promise((resolve) => setTimeout(resolve, 600));
    const next = await h.run("echo now");
    assert.equal(next.output, "late\nnow\n");
  });
});
