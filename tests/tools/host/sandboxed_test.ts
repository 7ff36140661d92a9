/**
 * Attacks on the flags of the sandboxed tool host's own process (src/tools/host/sandboxed.ts
 * `processFence`): a workspace path with a comma or other odd characters must never widen what
 * the process may do beyond the worker's own permissions. Flags that cannot say the set exactly
 * give no fence (the process then starts the worker, which keeps its list).
 */
import assert from "node:assert/strict";
import { processFence } from "../../../src/tools/host/sandboxed.ts";

const base = (read: string[], write: string[]): Deno.PermissionOptionsObject => ({
  read,
  write,
  run: ["bash"],
  env: ["HOME", "PATH"],
  net: false,
  sys: false,
  ffi: false,
  import: false,
});

Deno.test("processFence: a plain workspace gives the exact flags and --deny-import", () => {
  const fence = processFence(base(["/w"], ["/w"]));
  assert.deepEqual(fence, [
    "--allow-read=/w",
    "--allow-write=/w",
    "--allow-run=bash",
    "--allow-env=HOME,PATH",
    "--deny-import",
  ]);
});

Deno.test("processFence: a path with a comma (`/tmp/x,/`) never becomes a grant of /; no fence is given", () => {
  for (const path of ["/tmp/x,/", "/tmp/a,,b", "/tmp/x,/etc"]) {
    const fence = processFence(base([path], [path]));
    assert.equal(fence, undefined, `${path}: ${JSON.stringify(fence)}`);
  }
});

Deno.test("processFence: any net, sys, ffi or import grant gives no fence", () => {
  for (const kind of ["net", "sys", "ffi", "import"] as const) {
    assert.equal(processFence({ ...base(["/w"], ["/w"]), [kind]: true }), undefined, kind);
  }
});

Deno.test("processFence: odd characters (=, spaces, a leading dash) stay inside one flag", () => {
  const path = "/tmp/--allow-all =x";
  const fence = processFence(base([path], [path]));
  assert.ok(fence);
  assert.equal(fence.filter((f) => f.startsWith("--allow-read")).length, 1);
  assert.ok(fence.includes(`--allow-read=${path}`));
  assert.ok(!fence.includes("--allow-all"));
});
