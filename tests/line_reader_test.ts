import assert from "node:assert/strict";
import { type LineEvent, parseMaxLineBytes, readLines } from "../src/line_reader.ts";

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return ReadableStream.from(chunks.map((c) => typeof c === "string" ? encoder.encode(c) : c));
}

async function collect(stream: ReadableStream<Uint8Array>, max?: number): Promise<LineEvent[]> {
  const events: LineEvent[] = [];
  for await (const event of readLines(stream, max)) events.push(event);
  return events;
}

Deno.test("lines split across chunks, CRLF, a last line without newline", async () => {
  const events = await collect(streamOf(["ab", "c\nde", "f\r\n\n", "g", "h"]));
  assert.deepEqual(events, [{ line: "abc" }, { line: "def" }, { line: "" }, { line: "gh" }]);
});

Deno.test("a character split between chunks is decoded whole", async () => {
  const bytes = new TextEncoder().encode("字\n");
  const events = await collect(streamOf([bytes.subarray(0, 1), bytes.subarray(1)]));
  assert.deepEqual(events, [{ line: "字" }]);
});

Deno.test("a line over the limit is reported by size and the next line still comes", async () => {
  const events = await collect(streamOf(["x".repeat(700), "y".repeat(700), "\nok\n"]), 1024);
  assert.deepEqual(events, [{ tooLong: 1400 }, { line: "ok" }]);
  const exact = await collect(streamOf(["z".repeat(1024) + "\n", "z".repeat(1025)]), 1024);
  assert.deepEqual(exact, [{ line: "z".repeat(1024) }, { tooLong: 1025 }]);
});

Deno.test("time grows linearly with the line's size", async () => {
  const time = async (bytes: number) => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const chunks = Array.from({ length: bytes / chunk.length }, () => chunk);
    const started = performance.now();
    const events = await collect(streamOf([...chunks, "\n"]));
    assert.equal(events.length, 1);
    return performance.now() - started;
  };
  await time(2 * 1024 * 1024);
  const small = await time(4 * 1024 * 1024);
  const large = await time(32 * 1024 * 1024);
  const ratio = large / small;
  console.log(`32 MiB line / 4 MiB line: ${ratio.toFixed(1)}x (linear: 8x, quadratic: 64x)`);
  assert.ok(ratio < 30, `reading is not linear: ${ratio.toFixed(1)}x for 8x the bytes`);
});

Deno.test("--max-line-bytes is a whole number of at least 1024", () => {
  assert.equal(parseMaxLineBytes(undefined), 256 * 1024 * 1024);
  assert.equal(parseMaxLineBytes("4096"), 4096);
  for (const bad of ["0", "12", "lots", "-5000"]) {
    assert.throws(() => parseMaxLineBytes(bad), /--max-line-bytes/);
  }
});

Deno.test("a reader that fills one buffer again on every read gives the same lines", async () => {
  // Like Deno.stdin.read: each read overwrites the bytes of the one before.
  const chunks = ["ab", "c\nde", "f\r\n\n", "字".slice(0, 1) + "\n", "g", "h"]
    .map((c) => new TextEncoder().encode(c));
  let next = 0;
  const reader = {
    read(buffer: Uint8Array): Promise<number | null> {
      if (next === chunks.length) return Promise.resolve(null);
      const chunk = chunks[next++];
      buffer.fill(0x78);
      buffer.set(chunk);
      return Promise.resolve(chunk.length);
    },
  };
  const events: LineEvent[] = [];
  for await (const event of readLines(reader)) events.push(event);
  assert.deepEqual(events, [
    { line: "abc" },
    { line: "def" },
    { line: "" },
    { line: "字" },
    { line: "gh" },
  ]);
});
