/**
 * The sandbox's side of the network proxy (proxy.ts): `deft __network-forwarder PORT SOCKET`, an
 * internal entry of Deft itself (main.ts hands the command line here before loading anything
 * else). It listens on 127.0.0.1:PORT inside the sandbox's (or container's) own network namespace
 * and relays every connection, byte for byte, to the proxy's Unix socket bound in from the host.
 * It decides nothing: the proxy does. Started by the policy (launch.ts) with only the permissions
 * it needs under `deno run`; a compiled Deft keeps its own, and the sandbox is the fence there.
 * Prints one line ("ready") once every port listens, then nothing. No imports: it loads fast.
 */

/** The argument that makes Deft the sandbox's network forwarder. main.ts checks the same text. */
export const FORWARDER_COMMAND = "__network-forwarder";

/** One loopback port and the proxy socket its connections are relayed to. */
export interface ForwardPair {
  port: number;
  socket: string;
}

const USAGE = `${FORWARDER_COMMAND} is Deft's internal network relay inside its sandbox, started ` +
  "by Deft itself; it is not a command for users. Its arguments are PORT SOCKET pairs: a port " +
  "from 1 to 65535 and the absolute path of a Unix socket.";

/**
 * The pairs of `args` (`PORT SOCKET`, one or more), or an Error saying what is wrong: a port is a
 * plain decimal number from 1 to 65535, a socket an absolute path without control characters.
 */
export function parseForwarderArgs(args: readonly string[]): ForwardPair[] | Error {
  if (args.length === 0 || args.length % 2 !== 0) {
    return new Error(`${USAGE} Got ${args.length} argument(s).`);
  }
  const pairs: ForwardPair[] = [];
  for (let i = 0; i < args.length; i += 2) {
    const [portText, socket] = [args[i], args[i + 1]];
    const port = /^[1-9][0-9]{0,4}$/.test(portText) ? Number(portText) : NaN;
    if (!(port <= 65535)) return new Error(`${USAGE} ${JSON.stringify(portText)} is not a port.`);
    // deno-lint-ignore no-control-regex
    if (!socket.startsWith("/") || /[\x00-\x1f\x7f]/.test(socket) || socket.length > 4096) {
      return new Error(`${USAGE} ${JSON.stringify(socket)} is not an absolute socket path.`);
    }
    if (pairs.some((p) => p.port === port)) {
      return new Error(`${USAGE} Port ${port} is given twice.`);
    }
    pairs.push({ port, socket });
  }
  return pairs;
}

/**
 * Listens on 127.0.0.1 at every pair's port and relays each connection to that pair's socket;
 * throws when a port cannot be listened on. The relays go on until the listeners are closed.
 */
export function forward(pairs: readonly ForwardPair[]): Deno.Listener[] {
  const listeners = pairs.map(({ port }) => Deno.listen({ hostname: "127.0.0.1", port }));
  pairs.forEach(({ socket }, i) => void acceptAll(listeners[i], socket));
  return listeners;
}

async function acceptAll(listener: Deno.Listener, socket: string): Promise<void> {
  try {
    for await (const client of listener) void relay(client, socket);
  } catch {
    // The listener was closed.
  }
}

async function relay(client: Deno.Conn, socketPath: string): Promise<void> {
  let upstream: Deno.Conn;
  try {
    upstream = await Deno.connect({ transport: "unix", path: socketPath });
  } catch {
    client.close();
    return;
  }
  let closed = false;
  const closeBoth = () => {
    if (closed) return;
    closed = true;
    for (const c of [client, upstream]) {
      try {
        c.close();
      } catch {
        // Already closed.
      }
    }
  };
  await Promise.all([pump(client, upstream, closeBoth), pump(upstream, client, closeBoth)]);
  closeBoth();
}

/**
 * One direction: plain reads and writes through one large buffer (a stream pipe moves small
 * chunks). The end of input passes on as a half-close; a failure ends both directions.
 */
async function pump(from: Deno.Conn, to: Deno.Conn, closeBoth: () => void): Promise<void> {
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
}

/**
 * `deft __network-forwarder PORT SOCKET …`: exit code 2 with the reason on stderr for bad
 * arguments, 1 when a port cannot be listened on; else "ready" on stdout and relays forever.
 */
export async function forwarderMain(args: readonly string[]): Promise<number> {
  const pairs = parseForwarderArgs(args);
  const encoder = new TextEncoder();
  if (pairs instanceof Error) {
    await Deno.stderr.write(encoder.encode(`deft: ${pairs.message}\n`));
    return 2;
  }
  try {
    forward(pairs);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    await Deno.stderr.write(encoder.encode(`deft: the network forwarder cannot listen: ${why}\n`));
    return 1;
  }
  await Deno.stdout.write(encoder.encode("ready\n"));
  Deno.stdout.close();
  // The relays keep the process alive; it ends when it is killed (with its sandbox).
  return await new Promise<number>(() => {});
}
