/**
 * Unix sockets of host services (Docker, D-Bus, ssh-agent live under /run, /var/run, /var/tmp,
 * $XDG_RUNTIME_DIR) cannot be reached from the sandboxed shell; without a sandbox they can.
 */
import assert from "node:assert/strict";
import { withHarness } from "../../helpers/bash.ts";
import { tempDir } from "../../helpers/temp.ts";

const CONNECT = `python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected")' `;

async function canWrite(dir: string): Promise<boolean> {
  try {
    await (await tempDir("deft-probe-", { dir })).remove();
    return true;
  } catch {
    return false;
  }
}

for (const dir of ["/var/tmp", "/run"]) {
  Deno.test({
    name: `sandbox: a host service's socket under ${dir} cannot be connected to`,
    ignore: !(await canWrite(dir)),
    async fn() {
      await using socketDirTemp = await tempDir("deft-service-", { dir });
      const socketDir = socketDirTemp.path;
      const path = `${socketDir}/service.sock`;
      const listener = Deno.listen({ transport: "unix", path });
      const accepted: Deno.Conn[] = [];
      const accepting = (async () => {
        for await (const conn of listener) accepted.push(conn);
      })();
      try {
        await withHarness({ sandbox: "workspace-write" }, async (h) => {
          const r = await h.run(CONNECT + path);
          assert.notEqual(r.error_code, 0);
          assert.match(r.error!, /No such file or directory/);
          const listing = await h.run(`ls -A ${dir}`);
          assert.equal(listing.output, "", "the folder is an empty private one");
        });
        assert.equal(accepted.length, 0);
        await withHarness({}, async (h) => {
          const r = await h.run(CONNECT + path);
          assert.equal(r.output, "connected\n", "the attack is real without a sandbox");
        });
        assert.equal(accepted.length, 1);
      } finally {
        listener.close();
        await accepting.catch(() => {});
        for (const conn of accepted) conn.close();
      }
    },
  });
}

Deno.test("sandbox: a socket under $XDG_RUNTIME_DIR outside /run cannot be connected to", async () => {
  // Outside /run and /tmp (both are hidden anyway), as on a machine whose runtime dir is elsewhere.
  const home = Deno.env.get("HOME");
  const parent = home && !home.startsWith("/tmp") && await canWrite(home) ? home : Deno.cwd();
  await using runtimeTemp = await tempDir(".deft-xdg-runtime-", { dir: parent });
  const runtime = runtimeTemp.path;
  const path = `${runtime}/bus`;
  const listener = Deno.listen({ transport: "unix", path });
  const accepted: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) accepted.push(conn);
  })();
  const before = Deno.env.get("XDG_RUNTIME_DIR");
  Deno.env.set("XDG_RUNTIME_DIR", runtime);
  try {
    await withHarness({ sandbox: "workspace-write" }, async (h) => {
      const r = await h.run(CONNECT + path);
      assert.notEqual(r.error_code, 0, "the sandboxed shell reached the runtime dir's socket");
      assert.equal((await h.run(`ls -A ${runtime}`)).output, "", "the folder is an empty one");
    });
    assert.equal(accepted.length, 0);
    await withHarness({}, async (h) => {
      const r = await h.run(CONNECT + path);
      assert.equal(r.output, "connected\n", "the attack is real without a sandbox");
    });
    assert.equal(accepted.length, 1);
  } finally {
    if (before === undefined) Deno.env.delete("XDG_RUNTIME_DIR");
    else Deno.env.set("XDG_RUNTIME_DIR", before);
    listener.close();
    await accepting.catch(() => {});
    for (const conn of accepted) conn.close();
  }
});
