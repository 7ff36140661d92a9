/** Markers are found across read boundaries; look-alikes pass through as output. */
import assert from "node:assert/strict";
import { MarkerScanner } from "../../../src/tools/bash/marker_scanner.ts";

const TAG = "__DEFT_END_0123456789abcdef0123456789abcdef";
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Feeds `chunks`; returns the output before the first marker, its payload and what followed. */
function scan(chunks: string[]) {
  const scanner = new MarkerScanner(TAG);
  let output = "";
  let payload: string | null = null;
  let after = "";
  for (const chunk of chunks) {
    let data: Uint8Array = enc.encode(chunk);
    while (true) {
      const r = scanner.push(data);
      if (payload === null) output += dec.decode(r.output);
      else after += dec.decode(r.output);
      if (r.payload !== null) {
        if (payload === null) payload = r.payload;
      }
      if (r.rest.length === 0) break;
      data = r.rest;
    }
  }
  after += dec.decode(scanner.flush());
  return { output, payload, after };
}

Deno.test("marker scanner: finds the marker at every split point", () => {
  const stream = `hello\nworld\n${TAG}:0:/tmp/a b:c:${TAG}\nlater`;
  for (let cut = 0; cut <= stream.length; cut++) {
    const r = scan([stream.slice(0, cut), stream.slice(cut)]);
    assert.deepEqual(
      r,
      { output: "hello\nworld", payload: "0:/tmp/a b:c", after: "later" },
      `${cut}`,
    );
  }
});

Deno.test("marker scanner: one byte at a time", () => {
  const stream = `x\n${TAG}::${TAG}\n`;
  assert.deepEqual(scan([...stream]), { output: "x", payload: "", after: "" });
});

Deno.test("marker scanner: look-alikes are output", () => {
  const fakes = [
    `\n__DEFT_END_ffffffffffffffffffffffffffffffff:0:/:__DEFT_END_ffffffffffffffffffffffffffffffff\n`,
    `\n${TAG.slice(0, -1)}:0:/:${TAG.slice(0, -1)}\n`,
    `x${TAG}:0:/:${TAG}\n`, // not at the start of a line
    `\n${TAG} 0\n`,
  ];
  const r = scan([fakes.join(""), `\n${TAG}:7:/:${TAG}\n`]);
  assert.equal(r.output, fakes.join(""));
  assert.equal(r.payload, "7:/");
});

Deno.test("marker scanner: bytes held back are released at the end", () => {
  const r = scan([`text\n${TAG.slice(0, 10)}`]);
  // Only what could begin a marker waits; at the end it turns out to be output.
  assert.deepEqual(r, { output: "text", payload: null, after: `\n${TAG.slice(0, 10)}` });
});
