/**
 * How a sandboxed command reaches the network proxy (proxy.ts): the sandbox keeps its own network
 * namespace (no route out), the proxy's Unix socket is bound in at its own path, and the command
 * is started behind a small bash prologue that first starts the forwarder (forwarder.js, run by
 * this Deno with only the permissions it needs) on 127.0.0.1:`FORWARDER_PORT` (HTTP) and
 * 127.0.0.1:`SOCKS_FORWARDER_PORT` (SOCKS5, the socket beside the proxy's), waits until it
 * listens, then execs the command. The command's environment points every proxy variable at the
 * forwarder, with `NO_PROXY` empty: a program that ignores the variables, or a model that clears
 * them, has no network at all.
 */
import { SandboxUnavailableError } from "../sandbox_options.ts";
import { takesPermissionFlags } from "../self.ts";

/** The loopback port the forwarder listens on inside the sandbox's own network namespace. */
export const FORWARDER_PORT = 3128;
/** The loopback port the forwarder relays to the SOCKS5 server (`ALL_PROXY=socks5h://…`). */
export const SOCKS_FORWARDER_PORT = 1080;

/**
 * The SOCKS5 server's socket for the HTTP proxy's `socket`: its sibling in the same private
 * folder (proxy.ts starts both there).
 */
export function socksSocketOf(socket: string): string {
  return `${socket.slice(0, socket.lastIndexOf("/"))}/socks.sock`;
}

/** The forwarder's own source file (plain JavaScript, nothing to compile). */
export function forwarderPath(): string {
  return decodeURIComponent(new URL("./forwarder.js", import.meta.url).pathname);
}

// $1 deno, $2 forwarder.js, $3 port, $4 socket, $5 SOCKS5 port, $6 SOCKS5 socket; the rest is
// the command. The forwarder prints "ready" once it listens; its stdin, stdout and stderr are
// none of the command's.
const PROLOGUE = [
  "deno=$1 forwarder=$2 port=$3 socket=$4 sport=$5 ssocket=$6; shift 6",
  // No update check: it would ask the proxy for dl.deno.land on the model's behalf.
  'exec 3< <(DENO_NO_UPDATE_CHECK=1 exec "$deno" run --quiet --no-config --no-lock --no-prompt --cached-only ' +
  '"--allow-net=127.0.0.1:$port,127.0.0.1:$sport,unix:$socket,unix:$ssocket" ' +
  '"--allow-read=$socket,$ssocket" "--allow-write=$socket,$ssocket" ' +
  '"$forwarder" "$port" "$socket" "$sport" "$ssocket" </dev/null 2>/dev/null)',
  "IFS= read -r ready <&3; exec 3<&-",
  'if [ "$ready" != ready ]; then',
  '  echo "deft: the sandbox network forwarder did not start; the network list cannot be used" >&2',
  "  exit 125",
  "fi",
  'exec "$@"',
].join("\n");

/**
 * `argv` started behind the forwarder for the proxy at `socket` (a host path, bound into the
 * sandbox at the same path). Throws `SandboxUnavailableError` for a compiled Deft, which has no
 * Deno to run the forwarder with.
 */
export function behindForwarder(argv: readonly string[], socket: string): string[] {
  if (!takesPermissionFlags()) {
    throw new SandboxUnavailableError(
      "the network list (network.allow) needs Deft run by Deno (from source or the bundle); " +
        "this compiled Deft cannot start the sandbox's network forwarder. Remove `network` " +
        "from the config, or run Deft with `deno run`.",
    );
  }
  return [
    "bash",
    "-c",
    PROLOGUE,
    "deft-network",
    Deno.execPath(),
    forwarderPath(),
    String(FORWARDER_PORT),
    socket,
    String(SOCKS_FORWARDER_PORT),
    socksSocketOf(socket),
    ...argv,
  ];
}

/**
 * The forwarder started on its own (a container's, whose whole network namespace it serves):
 * `deno` runs `forwarder` with permission for its two loopback ports, `socket` (the HTTP
 * proxy's) and `socks` (the SOCKS5 server's) only, offline. It prints "ready" once it listens.
 */
export function forwarderArgv(
  deno: string,
  forwarder: string,
  socket: string,
  socks: string,
): string[] {
  return [
    deno,
    "run",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--no-prompt",
    "--cached-only",
    `--allow-net=127.0.0.1:${FORWARDER_PORT},127.0.0.1:${SOCKS_FORWARDER_PORT},unix:${socket},unix:${socks}`,
    `--allow-read=${socket},${socks}`,
    `--allow-write=${socket},${socks}`,
    forwarder,
    String(FORWARDER_PORT),
    socket,
    String(SOCKS_FORWARDER_PORT),
    socks,
  ];
}

/**
 * The files the prologue runs, shown read-only inside the sandbox at their own paths (Deft's code
 * or Deno may live under a folder the sandbox replaces, such as /tmp).
 */
export function forwarderFiles(): string[] {
  return [Deno.execPath(), forwarderPath()];
}

/**
 * The variables that point every client at the forwarder: `HTTP_PROXY` and `HTTPS_PROXY` at the
 * HTTP proxy, `ALL_PROXY` at the SOCKS5 server (`socks5h`: the name goes to the proxy, which
 * resolves it); `NO_PROXY` empty.
 */
export function proxyEnvironment(): Record<string, string> {
  const http = `http://127.0.0.1:${FORWARDER_PORT}`;
  const socks = `socks5h://127.0.0.1:${SOCKS_FORWARDER_PORT}`;
  const env: Record<string, string> = {};
  for (const [name, url] of [["HTTP_PROXY", http], ["HTTPS_PROXY", http], ["ALL_PROXY", socks]]) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = "";
  env.no_proxy = "";
  return env;
}
