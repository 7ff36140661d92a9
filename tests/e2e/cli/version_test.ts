import assert from "node:assert/strict";
import { runDeft } from "../../helpers/deft.ts";
import { VERSION } from "../../../src/version.ts";

Deno.test("deft --version answers as commander does, without it", async () => {
  const fast = await runDeft(["--version"]);
  // Two arguments are not the fast path's: commander answers these.
  const full = await runDeft(["--version", "run"]);
  assert.equal(fast.code, 0, fast.stderr);
  assert.equal(full.code, 0, full.stderr);
  assert.equal(fast.stdout, `${VERSION}\n`);
  assert.equal(fast.stdout, full.stdout);
  assert.equal(fast.stderr, "");
  const short = await runDeft(["-V"]);
  assert.equal(short.stdout, fast.stdout);
});
