/**
 * The bash tool inside the permission-fenced tool host, as `deft` runs it: Deno may start only
 * bash, bwrap, git, unshare and setpriv there, and may not read /proc, yet timeouts and close must
 * still work.
 */
import assert from "node:assert/strict";
import { ToolHost } from "../../../src/tools/host/remote.ts";
import type { ToolSettings } from "../../../src/tools/base.ts";
import { eventually, pidsByCmdline } from "./helpers.ts";

async function hostTest(settings: ToolSettings, needle: string): Promise<void> {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-host-test-" }));
  const host = new ToolHost({ provider: "openai", workspace, settings }, ["bash"], {
    temp: "/tmp",
  });
  try {
    const first = await host.call("bash", { command: "export KEEP=kept; echo hi" });
    assert.deepEqual(first, { output: "hi\n", error: null, error_code: 0 });
    const slow = await host.call("bash", { command: "sleep 30; touch ran-on", timeout: 0.5 });
    assert.equal(slow.error_code, 124);
    assert.match(slow.error!, /shell is still usable/);
    const bg = await host.call("bash", {
      command: `echo "$KEEP"; setsid sleep ${needle} & echo started`,
    });
    assert.equal(bg.output, "kept\nstarted\n");
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length > 0));
    const big = await host.call("bash", { command: "seq 1 100000" });
    assert.match(big.output!, /characters omitted/);
  } finally {
    await host.close("bash");
    await Deno.remove(workspace, { recursive: true });
  }
  await assert.rejects(() => Deno.stat(`${workspace}/ran-on`), Deno.errors.NotFound);
  assert.ok(
    await eventually(async () => (await pidsByCmdline(needle)).length === 0),
    "the setsid background job died at close",
  );
}

Deno.test("host: timeouts, state and close work under the tool host's permissions", async () => {
  await hostTest({}, "876543.5");
});

Deno.test("host: the sandbox works under the tool host's permissions", async () => {
  await hostTest({ sandbox: "workspace-write" }, "876543.75");
});

Deno.test("host: without bwrap, unshare holds the shell under the tool host's permissions", async () => {
  const workspace = await Deno.realPath(await Deno.makeTempDir({ prefix: "deft-host-test-" }));
  const settings: ToolSettings = { bwrapPath: "/nonexistent/bwrap" };
  const host = new ToolHost({ provider: "openai", workspace, settings }, ["bash"], {
    temp: "/tmp",
  });
  // Out of the shell's group and without its environment marker: only the namespace ends it.
  const sleeper = `sleep 876543.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  try {
    const init = await host.call("bash", { command: "tr '\\0' ' ' < /proc/1/cmdline" });
    assert.match(init.output!, / deft-init bash/, String(init.error));
    await host.call("bash", { command: `setsid env -i ${sleeper} >/dev/null 2>&1 & echo ok` });
    assert.ok(await eventually(async () => (await pidsByCmdline(sleeper)).length === 1));
  } finally {
    await host.close("bash");
    await Deno.remove(workspace, { recursive: true });
  }
  assert.ok(
    await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
    `${sleeper} survived the close`,
  );
});
