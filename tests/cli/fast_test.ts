import assert from "node:assert/strict";
import { fastAnswer, fastParse } from "../../src/cli/fast.ts";
import { VERSION } from "../../src/version.ts";

Deno.test("fastAnswer: --version and -V alone print the version; anything else goes on", () => {
  assert.equal(fastAnswer(["--version"]), `${VERSION}\n`);
  assert.equal(fastAnswer(["-V"]), `${VERSION}\n`);
  for (const args of [[], ["--help"], ["--version", "run"], ["run", "--version"], ["-v"]]) {
    assert.equal(fastAnswer(args), undefined, args.join(" "));
  }
  // The pipeline fast path does not claim --version either.
  assert.equal(fastParse(["--version"]), undefined);
});
