/**
 * src/policy/paths.ts stands in for `node:path` on the start-up path, and containment decisions
 * rest on it: every function must give `node:path`'s (POSIX) answer, on awkward inputs and on
 * random ones.
 */
import assert from "node:assert/strict";
import * as node from "node:path";
import * as paths from "../../src/policy/paths.ts";

const AWKWARD = [
  "",
  ".",
  "..",
  "/",
  "//",
  "///",
  "/..",
  "/../..",
  "/./",
  "a",
  "a/",
  "a//",
  "./a",
  "../a",
  "../../a/..",
  "a/..",
  "a/../",
  "a/../..",
  "a/./b/../../c",
  "/a",
  "/a/",
  "/a//b",
  "//a",
  "//a/b",
  "/a/b/../../..",
  "/a/b/../../../c/",
  "/a/.b/..c/...",
  "/a/b c/ d",
  "...",
  "a/...",
  "/tmp/x/..//y/./z//",
];

/** Random paths over a small alphabet of segments, so `..`, `.`, `//` and shared prefixes meet. */
function randomPaths(count: number, seed: number): string[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const parts = ["a", "b", "ab", ".", "..", "", "...", "a.b"];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = Math.floor(next() * 6);
    const segs = Array.from({ length: n }, () => parts[Math.floor(next() * parts.length)]);
    out.push((next() < 0.5 ? "/" : "") + segs.join("/") + (next() < 0.2 ? "/" : ""));
  }
  return out;
}

const INPUTS = [...AWKWARD, ...randomPaths(400, 7)];

Deno.test("paths: normalize, isAbsolute and dirname answer as node:path does", () => {
  for (const p of INPUTS) {
    assert.equal(paths.normalize(p), node.normalize(p), `normalize(${JSON.stringify(p)})`);
    assert.equal(paths.isAbsolute(p), node.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
    assert.equal(paths.dirname(p), node.dirname(p), `dirname(${JSON.stringify(p)})`);
  }
  assert.equal(paths.sep, node.sep);
  assert.equal(paths.delimiter, node.delimiter);
});

Deno.test("paths: join and resolve answer as node:path does, relative parts from the cwd", () => {
  for (let i = 0; i < INPUTS.length; i++) {
    const a = INPUTS[i];
    const b = INPUTS[(i * 7 + 3) % INPUTS.length];
    const c = INPUTS[(i * 13 + 5) % INPUTS.length];
    const shown = JSON.stringify([a, b, c]);
    assert.equal(paths.join(a, b, c), node.join(a, b, c), `join${shown}`);
    assert.equal(paths.join(a), node.join(a), `join(${JSON.stringify(a)})`);
    assert.equal(paths.resolve(a, b, c), node.resolve(a, b, c), `resolve${shown}`);
    assert.equal(paths.resolve(a), node.resolve(a), `resolve(${JSON.stringify(a)})`);
  }
  assert.equal(paths.join(), node.join());
  assert.equal(paths.resolve(), node.resolve());
});

Deno.test("paths: relative answers as node:path does, across the root and shared prefixes", () => {
  const pairs: [string, string][] = [
    ["/", "/"],
    ["/", "/a"],
    ["/a", "/"],
    ["/a/b", "/a/bc"],
    ["/a/bc", "/a/b"],
    ["/a/b", "/a/b/c"],
    ["/a/b/c", "/a/b"],
    ["/a/b/", "/a/b"],
    ["/work/ws", "/work/ws-evil/x"],
    ["/work/ws", "/work/ws/../ws-evil"],
    ["a", "b"],
    ["", "/x"],
  ];
  for (let i = 0; i < INPUTS.length; i++) {
    pairs.push([INPUTS[i], INPUTS[(i * 11 + 1) % INPUTS.length]]);
  }
  for (const [from, to] of pairs) {
    const shown = JSON.stringify([from, to]);
    assert.equal(paths.relative(from, to), node.relative(from, to), `relative${shown}`);
  }
});
