/** The bash tool inside bubblewrap (`sandbox: workspace-write`), with real bwrap. */
import assert from "node:assert/strict";
import { eventually, harness, pidsByCmdline, withHarness } from "../../../helpers/bash.ts";
import type { ToolSettings } from "../../../../src/tools/base.ts";

const SANDBOX: ToolSettings = { sandbox: "workspace-write" };

Deno.test("sandbox: writes outside the workspace fail with the OS error", async () => {
  await withHarness(SANDBOX, async (h) => {
    const r = await h.run("touch /etc/deft_sandbox_probe");
    assert.equal(r.error_code, 1);
    assert.match(r.error!, /Read-only file system/);
    await assert.rejects(() => Deno.stat("/etc/deft_sandbox_probe"), Deno.errors.NotFound);
    const home = await h.run('touch "$HOME/deft_sandbox_probe"');
    assert.notEqual(home.error_code, 0);
  }, "deft sandbox ");
});

Deno.test("sandbox: the workspace is writable at its own path; /tmp is private", async () => {
  await withHarness(SANDBOX, async (h) => {
    const r = await h.run(
      `pwd; echo inside > made.txt; echo "$PWD/abs.txt" > "${h.workspace}/abs.txt"; ` +
        "echo scratch > /tmp/deft_private_probe && cat /tmp/deft_private_probe",
    );
    assert.equal(r.error_code, 0, String(r.error));
    assert.equal(r.output, `${h.workspace}\nscratch\n`);
    assert.equal(await Deno.readTextFile(`${h.workspace}/made.txt`), "inside\n");
    assert.equal(await Deno.readTextFile(`${h.workspace}/abs.txt`), `${h.workspace}/abs.txt\n`);
    await assert.rejects(() => Deno.stat("/tmp/deft_private_probe"), Deno.errors.NotFound);
  }, "deft sandbox ");
});

Deno.test("sandbox: no network unless allowed", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const accepted: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) accepted.push(conn);
  })();
  const probe = `echo hello > /dev/tcp/127.0.0.1/${port} && echo connected`;
  try {
    await withHarness(SANDBOX, async (h) => {
      const r = await h.run(probe);
      assert.notEqual(r.error_code, 0);
      assert.match(r.error!, /Connection refused|Network is unreachable/);
    });
    await withHarness({ ...SANDBOX, allowNetwork: true }, async (h) => {
      const r = await h.run(probe);
      assert.equal(r.output, "connected\n", String(r.error));
    });
    await withHarness({}, async (h) => {
      assert.equal((await h.run(probe)).output, "connected\n", "unsandboxed has network");
    });
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const conn of accepted) conn.close();
  }
  assert.equal(accepted.length, 2);
});

Deno.test("sandbox: state persists, timeouts recover, and close kills background jobs", async () => {
  const h = await harness(SANDBOX);
  const needle = "987654.25";
  try {
    await h.run("export KEEP=kept; mkdir -p sub; cd sub");
    const slow = await h.run("sleep 30", { timeout: 0.5 });
    assert.equal(slow.error_code, 124);
    assert.match(slow.error!, /shell is still usable/);
    const r = await h.run(`pwd; echo "$KEEP"; sleep ${needle} & echo started`);
    assert.equal(r.output, `${h.workspace}/sub\nkept\nstarted\n`);
    assert.ok(await eventually(async () => (await pidsByCmdline(needle)).length > 0));
  } finally {
    await h.dispose();
  }
  assert.ok(
    await eventually(async () => (await pidsByCmdline(needle)).length === 0),
    "the background sleep died with the sandbox",
  );
});

Deno.test("sandbox: clipped output is saved where the sandboxed shell can read it", async () => {
  await withHarness({ ...SANDBOX, outputLimit: 200 }, async (h) => {
    const r = await h.run("seq 1 1000");
    const path = r.output!.match(/saved in (\S+);/)![1];
    const read = await h.run(`sed -n '500,501p' ${path}; echo x > ${path}`);
    assert.equal(read.output, "500\n501\n");
    assert.match(read.error!, /Read-only file system/, "saved outputs are read-only inside");
  });
});

Deno.test("sandbox: missing bubblewrap is an error that says how to install it", async () => {
  for (const bwrapPath of ["/nonexistent/bwrap", "deft-no-such-bwrap"]) {
    await withHarness({ ...SANDBOX, bwrapPath }, async (h) => {
      const r = await h.run("touch ran-unsandboxed");
      assert.equal(r.error_code, -1);
      assert.match(r.error!, /needs bubblewrap/);
      assert.match(r.error!, /apt-get install -y bubblewrap/);
      await assert.rejects(() => Deno.stat(`${h.workspace}/ran-unsandboxed`), Deno.errors.NotFound);
      const restart = await h.tool.execute({ restart: true });
      assert.match(restart.error!, /apt-get install -y bubblewrap/);
    });
  }
});

Deno.test("sandbox: a bwrap that cannot start the sandbox is an error, never a fallback", async () => {
  await withHarness({ ...SANDBOX, bwrapPath: "/bin/false" }, async (h) => {
    const r = await h.run("touch ran-unsandboxed");
    assert.equal(r.error_code, -1);
    assert.match(r.error!, /Cannot start the sandboxed shell: it exited with status 1/);
    await assert.rejects(() => Deno.stat(`${h.workspace}/ran-unsandboxed`), Deno.errors.NotFound);
  });
});
