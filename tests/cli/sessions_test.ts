/** `deft sessions` starts with what it uses: no commander, no tool host, no tool catalog. */
import assert from "node:assert/strict";
import { loadedModules } from "../helpers/imports.ts";

Deno.test("deft sessions and deft config load neither commander nor the tool host", () => {
  for (const command of ["sessions.ts", "config.ts"]) {
    const { files, outside } = loadedModules([
      new URL(`../../src/cli/${command}`, import.meta.url),
      new URL("../../src/cli/fast.ts", import.meta.url),
      new URL("../../src/cli/dispatch.ts", import.meta.url),
    ]);
    assert.ok(files.some((f) => f.endsWith("/src/policy/secrets.ts")), "the walk follows imports");
    assert.deepEqual(outside.filter((o) => o.endsWith(" commander")), [], command);
    const host = files.filter((f) => /\/src\/tools\/host\/|\/src\/cli\/context\.ts$/.test(f));
    assert.deepEqual(host, [], `${command} needs no tool host`);
  }
});
