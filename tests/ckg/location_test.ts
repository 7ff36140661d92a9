/** Where databases live: outside the repository, one per workspace. */
import assert from "node:assert/strict";
import { graphDatabasePath, graphDirectory } from "../../src/ckg/location.ts";
import { tempDir } from "../helpers/temp.ts";

function withEnv(vars: Record<string, string | undefined>, fn: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  try {
    for (const [k, v] of Object.entries(vars)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
    fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      v === undefined ? Deno.env.delete(k) : Deno.env.set(k, v);
    }
  }
}

Deno.test("location: ckgDir, then Deft's cache folder (DEFT_CACHE_DIR, XDG_CACHE_HOME, ~/.cache)", async () => {
  await using temp = await tempDir("deft-location-");
  const root = temp.path;
  withEnv({ DEFT_CACHE_DIR: `${root}/d`, XDG_CACHE_HOME: `${root}/x`, HOME: `${root}/h` }, () => {
    assert.equal(graphDirectory("/explicit"), "/explicit");
    assert.equal(graphDirectory(), `${root}/d/ckg`);
  });
  withEnv({ DEFT_CACHE_DIR: undefined, XDG_CACHE_HOME: `${root}/x`, HOME: `${root}/h` }, () => {
    assert.equal(graphDirectory(), `${root}/x/deft/ckg`);
  });
  withEnv({ DEFT_CACHE_DIR: undefined, XDG_CACHE_HOME: undefined, HOME: `${root}/h` }, () => {
    assert.equal(graphDirectory(), `${root}/h/.cache/deft/ckg`);
  });
  // The graph goes where Deft's other caches go, under the same check: a cache folder that is a
  // link (someone else's place) is refused, never written through.
  Deno.mkdirSync(`${root}/elsewhere`);
  Deno.symlinkSync(`${root}/elsewhere`, `${root}/linked`);
  withEnv({ DEFT_CACHE_DIR: `${root}/linked`, HOME: `${root}/h` }, () => {
    assert.throws(() => graphDirectory(), /is a link/);
  });
});

Deno.test("location: one database per workspace real path, named by its hash", () => {
  const a = graphDatabasePath("/work/repo", "/c");
  assert.match(a, /^\/c\/repo-[0-9a-f]{16}\.db$/);
  assert.equal(graphDatabasePath("/work/repo", "/c"), a);
  assert.notEqual(graphDatabasePath("/other/repo", "/c"), a, "same name, other path");
  assert.match(graphDatabasePath("/", "/c"), /^\/c\/root-[0-9a-f]{16}\.db$/);
  assert.match(graphDatabasePath("/w/we ird:name", "/c"), /^\/c\/we_ird_name-[0-9a-f]{16}\.db$/);
});
