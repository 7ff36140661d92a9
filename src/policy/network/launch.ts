/**
 * How a sandboxed command reaches the network proxy (proxy.ts): the sandbox keeps its own network
 * namespace (no route out), the proxy's Unix socket is bound in at its own path, and the command
 * is started behind a small bash prologue that first starts the forwarder (forwarder.ts: Deft
 * itself as `deft __network-forwarder PORT SOCKET`, under `deno run` with only the permissions it
 * needs) on 127.0.0.1:`FORWARDER_PORT` (HTTP) and 127.0.0.1:`SOCKS_FORWARDER_PORT` (SOCKS5, the
 * socket beside the proxy's), waits until it listens, then execs the command. The command's
 * environment points every proxy variable at the forwarder, with `NO_PROXY` empty: a program that
 * ignores the variables, or a model that clears them, has no network at all.
 */
import { deftArgv } from "../self.ts";
import { denoDir } from "../dirs.ts";
import { FORWARDER_COMMAND, type ForwardPair } from "./forwarder.ts";

/** The loopback port the forwarder listens on inside the sandbox's own network namespace. */
export const FORWARDER_PORT = 3128;
/** The loopback port the forwarder relays to the SOCKS5 server (`SOCKS_PROXY=socks5h://…`). */
export const SOCKS_FORWARDER_PORT = 1080;

/**
 * The SOCKS5 server's socket for the HTTP proxy's `socket`: its sibling in the same private
 * folder (proxy.ts starts both there; a container binds both into one folder).
 */
export function socksSocketOf(socket: string): string {
  return `${socket.slice(0, socket.lastIndexOf("/"))}/socks.sock`;
}

/** The forwarder's ports and the sockets they relay to, for the HTTP proxy at `socket`. */
export function forwardPairs(socket: string): ForwardPair[] {
  return [
    { port: FORWARDER_PORT, socket },
    { port: SOCKS_FORWARDER_PORT, socket: socksSocketOf(socket) },
  ];
}

/**
 * The module Deft runs from: main.ts of the source tree, or the bundle file (whose chunks all
 * have its URL). A compiled Deft ignores it (`deftArgv`).
 */
export function forwarderEntry(): string {
  const here = import.meta.url;
  return here.endsWith("/src/policy/network/launch.ts")
    ? new URL("../../../main.ts", here).href
    : here;
}

/**
 * The files Deno must be let read to load the forwarder from `main` (a path): from source, the
 * forwarder's module beside main.ts (main.ts imports it at run time); the bundle reads itself.
 */
export function forwarderCode(main: string): string[] {
  return main.endsWith("/main.ts")
    ? [main, `${main.slice(0, -"main.ts".length)}src/policy/network/forwarder.ts`]
    : [main];
}

/**
 * The forwarder's Deno flags under `deno run` for `main`: the pairs' loopback ports and sockets,
 * read access to its own code, nothing else; offline, and no configuration or lock file of the
 * folder it starts in (a repository's).
 */
export function forwarderFlags(pairs: readonly ForwardPair[], main: string): string[] {
  const sockets = pairs.map((p) => p.socket);
  return [
    "--quiet",
    "--no-config",
    "--no-lock",
    "--cached-only",
    `--allow-net=${
      [
        ...pairs.map((p) => `127.0.0.1:${p.port}`),
        ...sockets.map((s) => `unix:${s}`),
      ].join(",")
    }`,
    `--allow-read=${[...sockets, ...forwarderCode(main)].join(",")}`,
    `--allow-write=${sockets.join(",")}`,
  ];
}

/**
 * The forwarder for the proxy at `socket` on `FORWARDER_PORT`, for the SOCKS5 server beside it
 * on `SOCKS_FORWARDER_PORT`: Deft itself (`exec`, running `main` under
 * Deno; a compiled `exec` alone) as `__network-forwarder PORT SOCKET …`. A container passes its
 * own paths. It prints "ready" once every port listens.
 */
export function forwarderArgv(
  socket: string,
  exec = Deno.execPath(),
  main = pathOf(forwarderEntry()),
): string[] {
  const pairs = forwardPairs(socket);
  return [
    ...deftArgv(forwarderFlags(pairs, main), main, exec),
    FORWARDER_COMMAND,
    ...pairs.flatMap((p) => [String(p.port), p.socket]),
  ];
}

function pathOf(url: string): string {
  return url.startsWith("file:") ? decodeURIComponent(new URL(url).pathname) : url;
}

// $1 the number of the forwarder's words, then those words; the rest is the command. The
// forwarder prints "ready" once it listens; its stdin, stdout and stderr are none of the command's.
const PROLOGUE = [
  'n=$1; shift; forwarder=("${@:1:n}"); shift "$n"',
  // No update check: it would ask the proxy for dl.deno.land on the model's behalf.
  'exec 3< <(DENO_NO_UPDATE_CHECK=1 exec "${forwarder[@]}" </dev/null 2>/dev/null)',
  "IFS= read -r ready <&3; exec 3<&-",
  'if [ "$ready" != ready ]; then',
  '  echo "deft: the sandbox network forwarder did not start; the network list cannot be used" >&2',
  "  exit 125",
  "fi",
  'exec "$@"',
].join("\n");

/**
 * `argv` started behind the forwarder for the proxy at `socket` (a host path, bound into the
 * sandbox at the same path).
 */
export function behindForwarder(argv: readonly string[], socket: string): string[] {
  const forwarder = forwarderArgv(socket);
  return ["bash", "-c", PROLOGUE, "deft-network", String(forwarder.length), ...forwarder, ...argv];
}

/**
 * The files the prologue runs, shown read-only inside the sandbox at their own paths (Deft's code,
 * Deno and its cache may live under a folder the sandbox replaces, such as /tmp).
 */
export function forwarderFiles(): string[] {
  const files = [Deno.execPath()];
  const entry = forwarderEntry();
  if (entry.startsWith("file:")) {
    // From source, main.ts and the forwarder's module (nothing else loads); else the bundle.
    files.push(...forwarderCode(pathOf(entry)));
    // Deno's cache, with their compiled form: one it cannot store there costs every start.
    const cache = denoDir();
    if (cache?.startsWith("/") && isDirectory(cache)) files.push(cache);
  }
  return files;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * The variables that point every client at the forwarder: `HTTP_PROXY`, `HTTPS_PROXY` and
 * `ALL_PROXY` at the HTTP proxy, whose refusals carry Deft's reason (Deno's `fetch` takes
 * `ALL_PROXY` first; through SOCKS5 its refusals would have no text); `SOCKS_PROXY` names the
 * SOCKS5 server (`socks5h`: the name goes to the proxy, which resolves it) for clients told to use
 * it; `NO_PROXY` empty.
 */
export function proxyEnvironment(): Record<string, string> {
  const http = `http://127.0.0.1:${FORWARDER_PORT}`;
  const socks = `socks5h://127.0.0.1:${SOCKS_FORWARDER_PORT}`;
  const env: Record<string, string> = {};
  const pairs = [["HTTP_PROXY", http], ["HTTPS_PROXY", http], ["ALL_PROXY", http], [
    "SOCKS_PROXY",
    socks,
  ]];
  for (const [name, url] of pairs) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = "";
  env.no_proxy = "";
  return env;
}
