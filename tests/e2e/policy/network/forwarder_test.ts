/**
 * `deft __network-forwarder PORT SOCKET`, the internal entry the sandbox's network relay runs as:
 * a user typing it with anything but a port and an absolute socket path gets a clear refusal and
 * nothing listens; started as the policy starts it (narrow Deno permissions) it relays bytes both
 * ways to the socket, half-closes included, and announces itself with one line.
 */
import assert from "node:assert/strict";
import { runDeft } from "../../../helpers/deft.ts";
import { tempDir } from "../../../helpers/temp.ts";
import { forwarderFlags } from "../../../../src/policy/network/launch.ts";
import { deftArgv } from "../../../../src/policy/self.ts";

const MAIN = new URL("../../../../main.ts", import.meta.url).pathname;

Deno.test("forwarder entry: bad arguments are refused, saying what is wrong", async () => {
  for (
    const [args, why] of [
      [[], /Got 0 argument/],
      [["3128"], /Got 1 argument/],
      [["http", "/tmp/x.sock"], /"http" is not a port/],
      [["70000", "/tmp/x.sock"], /"70000" is not a port/],
      [["3128", "x.sock"], /"x\.sock" is not an absolute socket path/],
    ] as [string[], RegExp][]
  ) {
    const out = await runDeft(["__network-forwarder", ...args]);
    assert.equal(out.code, 2, JSON.stringify(args) + out.stderr);
    assert.equal(out.stdout, "");
    assert.match(out.stderr, /^deft: __network-forwarder is Deft's internal network relay/);
    assert.match(out.stderr, /not a command for users/);
    assert.match(out.stderr, why);
  }
});

Deno.test("forwarder entry: under its narrow permissions it relays to the socket, both ways", async () => {
  await using dir = await tempDir("deft-fwd-");
  const socket = `${dir.path}/proxy.sock`;
  // The proxy's side: echoes what it reads back in upper case, then closes on end of input.
  const server = Deno.listen({ transport: "unix", path: socket });
  const served = (async () => {
    for await (const conn of server) {
      void (async () => {
        let text = "";
        const buffer = new Uint8Array(65536);
        const decoder = new TextDecoder();
        for (let n; (n = await conn.read(buffer)) !== null;) {
          text += decoder.decode(buffer.subarray(0, n), { stream: true });
        }
        // The writable half was not closed with the readable one: answer after the half-close.
        const reply = new TextEncoder().encode(text.toUpperCase());
        let done = 0;
        while (done < reply.length) done += await conn.write(reply.subarray(done));
        conn.close();
      })();
    }
  })();
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = probe.addr.port;
  probe.close();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...deftArgv(forwarderFlags([{ port, socket }], MAIN), MAIN).slice(1),
      "__network-forwarder",
      String(port),
      socket,
    ],
    cwd: dir.path,
    env: { DENO_NO_UPDATE_CHECK: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    const first = await reader.read();
    reader.releaseLock();
    assert.equal(new TextDecoder().decode(first.value), "ready\n");
    const payload = "x".repeat(3 * 1024 * 1024) + "end";
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const writing = (async () => {
      const bytes = new TextEncoder().encode(payload);
      let done = 0;
      while (done < bytes.length) done += await conn.write(bytes.subarray(done));
      await conn.closeWrite();
    })();
    const back = await new Response(conn.readable).text();
    await writing;
    assert.equal(back.length, payload.length);
    assert.equal(back, payload.toUpperCase());
  } finally {
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel().catch(() => {});
    await child.stderr.cancel().catch(() => {});
    server.close();
    await served.catch(() => {});
  }
});
