/**
 * The close-name scan returns only names that may be close, never fewer than those that are:
 * every stored name within the allowed edits of the probe (ignoring case), or containing it.
 */
import assert from "node:assert/strict";
import { GraphStore } from "../../src/ckg/store.ts";
import { editDistance } from "../../src/ckg/search.ts";
import type { ExtractedSymbol } from "../../src/ckg/extract.ts";

Deno.test("namesNear: every name within reach is returned, and names out of reach mostly are not", () => {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const letters = "abcdeABCDE_";
  const word = (length: number) =>
    Array.from({ length }, () => letters[random(letters.length)]).join("");
  const mutate = (name: string) => {
    let out = name;
    for (let edits = random(4); edits > 0; edits--) {
      const at = random(out.length + 1);
      const op = random(3);
      const c = letters[random(letters.length)];
      out = op === 0
        ? out.slice(0, at) + c + out.slice(at)
        : op === 1
        ? out.slice(0, at) + out.slice(at + 1)
        : out.slice(0, at) + c + out.slice(at + 1);
    }
    return out || "a";
  };
  // Non-ASCII names too, which SQLite does not lower: their case is left to the caller.
  const probes = [
    ...Array.from({ length: 40 }, () => word(2 + random(14))),
    "caféÉx",
    "Éa",
    "naïveTÉbc",
  ];
  // Names near the probes (a few edits, other case) and unrelated ones.
  const names = new Set<string>();
  for (const probe of probes) {
    for (let i = 0; i < 30; i++) names.add(mutate(random(2) ? probe : probe.toUpperCase()));
    names.add(`x${probe}y`);
  }
  for (let i = 0; i < 2000; i++) names.add(word(1 + random(18)));
  names.add("CAFÉéX").add("déÉ_ÉaCeA__Dd").add("NAÏVEtébd");
  const store = GraphStore.open(":memory:", "/nowhere");
  try {
    const symbols: ExtractedSymbol[] = [...names].map((name, i) => ({
      kind: "function",
      subkind: null,
      name,
      className: null,
      parentFunction: null,
      parent: -1,
      startLine: i + 1,
      endLine: i + 1,
      startOffset: i,
      endOffset: i + 1,
      signature: name,
    }));
    store.putFile({
      path: "a.py",
      language: "python",
      size: 1,
      mtimeMs: 0,
      hash: "h",
      status: "indexed",
      note: null,
      hasErrors: false,
      racy: false,
    }, symbols);
    let near = 0;
    let returned = 0;
    for (const probe of probes) {
      const lower = probe.toLowerCase();
      const max = lower.length <= 4 ? 1 : lower.length <= 8 ? 2 : 3;
      const got = new Set(
        store.namesNear(probe, ["function"], "", max, 50_000).map((row) => row.name),
      );
      returned += got.size;
      for (const name of names) {
        const other = name.toLowerCase();
        if (editDistance(lower, other, max) <= max || other.includes(lower)) {
          near++;
          assert.ok(got.has(name), `${name} is within ${max} of ${probe} but was not returned`);
        }
      }
    }
    assert.ok(near > 200, `the fixture has close names to find (${near})`);
    // The pieces narrow the scan: far fewer rows than the names of about the same length.
    assert.ok(returned < probes.length * names.size / 4, `${returned} rows returned`);
  } finally {
    store.close();
  }
});
