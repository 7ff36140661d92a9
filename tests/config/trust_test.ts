import assert from "node:assert/strict";
import { join } from "node:path";
import { isTrustedBy, markNotTrusted } from "../../src/config/trust.ts";
import { tempDir } from "../helpers/temp.ts";

Deno.test("trust follows whole path components, never a shared prefix", async () => {
  assert.equal(await isTrustedBy("/home/u/work", ["/home/u/work"]), true);
  assert.equal(await isTrustedBy("/home/u/work-evil", ["/home/u/work"]), false);
  assert.equal(await isTrustedBy("/home/u/workx/a", ["/home/u/work"]), false);
  assert.equal(await isTrustedBy("/home/u/work-evil", ["/home/u/work/"]), false);
  assert.equal(await isTrustedBy("/home/u", ["/home/u/work"]), false);
  assert.equal(await isTrustedBy("/home/u/work-evil", ["/home/u/work/."]), false);
  assert.equal(await isTrustedBy("/home/u/work/x", ["/home/u/work/."]), true);
});

Deno.test("a relative trusted_folders entry trusts nothing", async () => {
  for (const entry of [".", "work", "", "./"]) {
    assert.equal(await isTrustedBy(Deno.cwd(), [entry]), false, JSON.stringify(entry));
  }
});

Deno.test("trust stops at a folder Deft marked as not trusted", async () => {
  await using tmp = await tempDir("deft-trust-marker-");
  const root = await Deno.realPath(tmp.path);
  const clone = join(root, "out", "t00", "workspace");
  await Deno.mkdir(clone, { recursive: true });
  assert.equal(await isTrustedBy(clone, [root]), true);
  await markNotTrusted(join(root, "out", "t00"));
  assert.equal(await isTrustedBy(clone, [root]), false, "inherited trust crosses the marker");
  assert.equal(await isTrustedBy(join(root, "out"), [root]), true, "above the marker");
  // Naming the clone itself is the user's own decision, not inheritance.
  assert.equal(await isTrustedBy(clone, [root, clone]), true);
});
