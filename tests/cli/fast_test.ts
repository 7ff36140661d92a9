import assert from "node:assert/strict";
import { fastParse } from "../../src/cli/fast.ts";

Deno.test("fastParse: --version and --help are not pipeline commands", () => {
  for (const args of [["--version"], ["-V"], ["--help"], ["-h"]]) {
    assert.equal(fastParse(args), undefined, args.join(" "));
  }
});
