import assert from "node:assert/strict";
import { GRAMMAR_SOURCES } from "../../src/ckg/grammar_sources.ts";
import { unpack } from "../../src/ckg/grammars.ts";

const root = new URL("../../", import.meta.url).pathname;

Deno.test("the packed grammars are exactly the grammar packages' .wasm (else: deno task grammars)", async () => {
  for (const [id, source] of Object.entries(GRAMMAR_SOURCES)) {
    const original = await Deno.readFile(`${root}node_modules/${source}`);
    const packed = await Deno.readFile(`${root}src/ckg/wasm/${id}.wasm.gz`);
    const unpacked = await unpack(packed);
    assert.ok(packed.length < original.length / 2, `${id} is packed`);
    assert.equal(unpacked.length, original.length, `${id}: stale; run deno task grammars`);
    assert.deepEqual(unpacked, original, `${id}: stale; run deno task grammars`);
  }
});
