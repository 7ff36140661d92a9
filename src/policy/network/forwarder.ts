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
  await splice(client, upstream);
}

/** How `splice` relays. */
export interface SpliceOptions {
  /** Bytes to send to `b` before anything read from `a` (what was read from `a` already). */
  toB?: Uint8Array;
  /** A read from `a` already under way (its bytes go to `b` first; null: `a` ended). */
  pendingFromA?: Promise<Uint8Array | null>;
  /** Milliseconds both directions may stay silent before both are closed (default: never). */
  idleMs?: number;
}

/**
 * Relays `a` and `b` to each other, byte for byte, until both directions end; closes both then.
 * Each direction reads into one large buffer and writes it on while the next read is under way
 * (two buffers a direction), so a slow reader or writer on one side holds the other back
 * (backpressure) without a copy or a promise per byte range beyond the read and the write. The
 * end of input passes on as a half-close; a failure ends both directions.
 */
export async function splice(a: Deno.Conn, b: Deno.Conn, options: SpliceOptions = {}) {
  let closed = false;
  let last = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closeBoth = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    for (const c of [a, b]) {
      try {
        c.close();
      } catch {
        // Already closed.
      }
    }
  };
  const idleMs = options.idleMs;
  if (idleMs !== undefined) {
    // One timer for the connection, moved on lazily: nothing is paid per chunk but a clock read.
    const check = () => {
      const quiet = Date.now() - last;
      if (quiet >= idleMs) closeBoth();
      else {
        timer = setTimeout(check, idleMs - quiet);
        Deno.unrefTimer(timer);
      }
    };
    timer = setTimeout(check, idleMs);
    Deno.unrefTimer(timer);
  }
  const touch = idleMs === undefined ? undefined : () => void (last = Date.now());
  await Promise.all([
    pump(a, b, closeBoth, touch, options.toB, options.pendingFromA),
    pump(b, a, closeBoth, touch),
  ]);
  closeBoth();
}

const BUFFER_BYTES = 256 * 1024;

async function writeAll(to: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await to.write(bytes.subarray(written));
}

/**
 * One direction of `splice`: a read into one buffer overlaps the write of the other. `first`
 * and `pending` (bytes and a read already taken from `from`) go out before anything else.
 */
async function pump(
  from: Deno.Conn,
  to: Deno.Conn,
  closeBoth: () => void,
  touch?: () => void,
  first?: Uint8Array,
  pending?: Promise<Uint8Array | null>,
): Promise<void> {
  const buffers = [new Uint8Array(BUFFER_BYTES), new Uint8Array(BUFFER_BYTES)];
  let which = 0;
  let reading: Promise<number | null> | undefined;
  try {
    if (first && first.length > 0) await writeAll(to, first);
    if (pending) {
      const bytes = await pending;
      if (bytes === null) return void await to.closeWrite();
      await writeAll(to, bytes);
    }
    reading = from.read(buffers[which]);
    for (;;) {
      const n = await reading;
      if (n === null) break;
      touch?.();
      const full = buffers[which];
      which ^= 1;
      // The next read goes on while this chunk is written.
      reading = from.read(buffers[which]);
      await writeAll(to, full.subarray(0, n));
      touch?.();
    }
    await to.closeWrite();
  } catch {
    closeBoth();
    // The read under way fails once its connection is closed: nobody waits for it.
    reading?.catch(() => {});
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
