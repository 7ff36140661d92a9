// The sandbox's side of the network proxy (proxy.ts): listens on 127.0.0.1:PORT inside the
// sandbox's own network namespace and relays every connection, byte for byte, to the proxy's Unix
// socket bound in from the host; its arguments are pairs, `PORT SOCKET`, one per proxy (the HTTP
// proxy's, the SOCKS5 server's). It decides nothing: the proxy does. Plain JavaScript, run by Deno
// with only the permissions it needs (the policy's `forwarderArgv`), so nothing is compiled into
// a cache the sandbox sees read-only. Prints one line ("ready") once it listens, then nothing.
const pairs = [];
for (let i = 0; i + 1 < Deno.args.length; i += 2) {
  pairs.push({ port: Number(Deno.args[i]), socketPath: Deno.args[i + 1] });
}
const listeners = pairs.map(({ port, socketPath }) => ({
  listener: Deno.listen({ hostname: "127.0.0.1", port }),
  socketPath,
}));
await Deno.stdout.write(new TextEncoder().encode("ready\n"));
Deno.stdout.close();

async function relay(client, socketPath) {
  let upstream;
  try {
    upstream = await Deno.connect({ transport: "unix", path: socketPath });
  } catch {
    client.close();
    return;
  }
  const closeBoth = () => {
    for (const c of [client, upstream]) {
      try {
        c.close();
      } catch {
        // Already closed.
      }
    }
  };
  // Each direction ends on its own (a half-close passes on); a failure ends both. Plain reads
  // and writes through one large buffer per direction: a stream pipe moves small chunks.
  const pump = async (from, to) => {
    const buffer = new Uint8Array(256 * 1024);
    try {
      for (;;) {
        const n = await from.read(buffer);
        if (n === null) break;
        let written = 0;
        while (written < n) written += await to.write(buffer.subarray(written, n));
      }
      await to.closeWrite();
    } catch {
      closeBoth();
    }
  };
  await Promise.all([pump(client, upstream), pump(upstream, client)]);
  closeBoth();
}

await Promise.all(listeners.map(async ({ listener, socketPath }) => {
  for await (const client of listener) relay(client, socketPath);
}));
