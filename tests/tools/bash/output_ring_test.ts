/** The bounded buffer of a background shell's unread output. */
import assert from "node:assert/strict";
import { OutputRing } from "../../../src/tools/bash/output_ring.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("output ring: keeps the newest bytes up to its limit, across wrap-around, and counts the rest", () => {
  const ring = new OutputRing(10);
  ring.push(bytes("abcdef"));
  ring.push(bytes("ghij"));
  assert.deepEqual(text(ring.take().bytes), "abcdefghij");
  ring.push(bytes("0123456"));
  ring.push(bytes("789AB"));
  ring.push(bytes("CD"));
  const { bytes: kept, dropped } = ring.take();
  assert.equal(text(kept), "456789ABCD");
  assert.equal(dropped, 4);
  ring.push(bytes("a whole lot more than ten"));
  assert.deepEqual(ring.take(), { bytes: bytes("re than ten").slice(1), dropped: 15 });
  assert.deepEqual(ring.take(), { bytes: new Uint8Array(0), dropped: 0 });
});

Deno.test("output ring: bytes put back come before what arrived since; dropAll frees and counts", () => {
  const ring = new OutputRing(8);
  ring.push(bytes("line1\npar"));
  const taken = ring.take();
  assert.equal(taken.dropped, 1);
  ring.push(bytes("tial"));
  ring.unshift(taken.bytes.subarray(taken.bytes.lastIndexOf(0x0a) + 1));
  assert.equal(text(ring.take().bytes), "partial");
  ring.push(bytes("12345678"));
  ring.unshift(bytes("old"));
  assert.deepEqual(ring.take(), { bytes: bytes("12345678"), dropped: 3 });
  ring.push(bytes("xyz"));
  ring.dropAll();
  assert.equal(ring.size, 0);
  assert.deepEqual(ring.take(), { bytes: new Uint8Array(0), dropped: 3 });
});
