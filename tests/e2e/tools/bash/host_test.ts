/**
 * The bash tool inside the permission-fenced tool host, as `deft` runs it: Deno may start only
 * bash, bwrap, git, unshare and setpriv there, and may not read /proc, yet timeouts and close must
 * still work.
 */
import assert from "node:assert/strict";
import { ToolHost } from "../../../../src/tools/host/mod.ts";
import type { ToolSettings } from "../../../../src/tools/base.ts";
import { eventually, pidsByCmdline } from "../../../helpers/bash.ts";
import { tempDir } from "../../../helpers/temp.ts";

async function hostTest(settings: ToolSettings, needle: string): Promise<void> {
  await using workspaceTemp = await tempDir("deft-host-test-");
  const workspace = workspaceTemp.path;
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
  }
  await assert.rejects(() => Deno.stat(`${workspace}/ran-on`), Deno.errors.NotFound);
  assert.ok(
    await eventually(async () => (await pidsByCmdline(needle)).length === 0),
    "the setsid background job died at close",
  );
}

/** A sleep argument no other run (a concurrent suite, another test) uses. */
function uniqueNeedle(): string {
  return `876543.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
}

Deno.test("host: timeouts, state and close work under the tool host's permissions", async () => {
  await hostTest({}, uniqueNeedle());
});

Deno.test("host: the sandbox works under the tool host's permissions", async () => {
  await hostTest({ sandbox: "workspace-write" }, uniqueNeedle());
});

Deno.test("host: with neither bwrap nor unshare, a deadline restart ends the old shell's setsid jobs", async () => {
  await using workspaceTemp = await tempDir("deft-host-test-");
  const workspace = workspaceTemp.path;
  await Deno.writeTextFile(`${workspace}/a.txt`, "a\n");
  const settings: ToolSettings = {
    sandbox: "none",
    bwrapPath: "/nonexistent/bwrap",
    unsharePath: "/nonexistent/unshare",
    // Any call of the host past its deadline restarts the whole host, the shell included.
    deadlines: { str_replace_based_edit_tool: 0.000001 },
  };
  const host = new ToolHost(
    { provider: "openai", workspace, settings },
    ["bash", "str_replace_based_edit_tool"],
    { temp: "/tmp" },
  );
  const sleeper = uniqueNeedle();
  try {
    // No namespace holds this shell: its program is bash itself.
    const init = await host.call("bash", { command: "tr '\\0' ' ' < /proc/1/cmdline" });
    assert.doesNotMatch(init.output!, /deft-init/, "the test needs a shell without a namespace");
    await host.call("bash", { command: `setsid sleep ${sleeper} >/dev/null 2>&1 & echo ok` });
    assert.ok(await eventually(async () => (await pidsByCmdline(sleeper)).length === 1));
    const late = await host.call("str_replace_based_edit_tool", {
      command: "view",
      path: `${workspace}/a.txt`,
    });
    assert.match(String(late.error), /deadline/);
    assert.ok(
      await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
      `${sleeper} survived the tool host's restart`,
    );
  } finally {
    await host.close("bash").catch(() => {});
    await host.close("str_replace_based_edit_tool").catch(() => {});
    for (const pid of await pidsByCmdline(sleeper)) Deno.kill(pid, "SIGKILL");
  }
});

Deno.test("host: without bwrap, unshare holds the shell under the tool host's permissions", async () => {
  await using workspaceTemp = await tempDir("deft-host-test-");
  const workspace = workspaceTemp.path;
  const settings: ToolSettings = { bwrapPath: "/nonexistent/bwrap" };
  const host = new ToolHost({ provider: "openai", workspace, settings }, ["bash"], {
    temp: "/tmp",
  });
  // Out of the shell's group and without its environment marker: only the namespace ends it.
  const sleeper = `sleep ${uniqueNeedle()}`;
  try {
    const init = await host.call("bash", { command: "tr '\\0' ' ' < /proc/1/cmdline" });
    assert.match(init.output!, / deft-init bash/, String(init.error));
    await host.call("bash", { command: `setsid env -i ${sleeper} >/dev/null 2>&1 & echo ok` });
    assert.ok(await eventually(async () => (await pidsByCmdline(sleeper)).length === 1));
  } finally {
    await host.close("bash");
  }
  assert.ok(
    await eventually(async () => (await pidsByCmdline(sleeper)).length === 0),
    `${sleeper} survived the close`,
  );
});

const RESTARTS: [string, ToolSettings][] = [
  ["sandbox none", { sandbox: "none" }],
  ["sandbox workspace-write", { sandbox: "workspace-write" }],
  // No namespace, and `env -i` hides the sleep from the marker scan: only the group kill ends it.
  ["neither bwrap nor unshare", {
    sandbox: "none",
    bwrapPath: "/nonexistent/bwrap",
    unsharePath: "/nonexistent/unshare",
  }],
];

for (const [label, settings] of RESTARTS) {
  Deno.test(`host: a deadline restart kills the running shell's processes (${label})`, async () => {
    await using workspaceTemp = await tempDir("deft-host-test-");
    const workspace = workspaceTemp.path;
    await Deno.writeTextFile(`${workspace}/a.txt`, "a\n");
    const host = new ToolHost(
      {
        provider: "openai",
        workspace,
        settings: { ...settings, deadlines: { str_replace_based_edit_tool: 0.000001 } },
      },
      ["bash", "str_replace_based_edit_tool"],
      { temp: "/tmp" },
    );
    const needle = uniqueNeedle();
    try {
      assert.equal((await host.call("bash", { command: "echo up" })).output, "up\n");
      // The shell is busy in the foreground, so it cannot end by itself when its stdin closes:
      // only the kill of its process group (and the namespace with it) ends the sleep.
      const busy = host.call("bash", { command: `env -i sleep ${needle}`, timeout: 3000 });
      assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length === 1));
      const late = await host.call("str_replace_based_edit_tool", {
        command: "view",
        path: `${workspace}/a.txt`,
      });
      assert.match(String(late.error), /deadline/);
      assert.match(String((await busy).error), /tool host was restarted/);
      assert.ok(
        await eventually(async () => (await pidsByCmdline(needle)).length === 0),
        `sleep ${needle} survived the tool host's restart`,
      );
    } finally {
      await host.close("bash").catch(() => {});
      await host.close("str_replace_based_edit_tool").catch(() => {});
      for (const pid of await pidsByCmdline(needle)) Deno.kill(pid, "SIGKILL");
    }
  });
}
