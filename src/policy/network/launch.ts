/**
 * How a sandboxed command reaches the network proxy (proxy.ts): the sandbox keeps its own network
 * namespace (no route out), the proxy's Unix socket is bound in at its own path, and the command
 * is started behind a small bash prologue that first starts the forwarder (forwarder.js, run by
 * this Deno with only the permissions it needs) on 127.0.0.1:`FORWARDER_PORT`, waits until it
 * listens, then execs the command. The command's environment points every proxy variable at the
 * forwarder, with `NO_PROXY` empty: a program that ignores the variables, or a model that clears
 * them, has no network at all.
 */
import { SandboxUnavailableError } from "../sandbox_options.ts";
import { takesPermissionFlags } from "../self.ts";

/** The loopback port the forwarder listens on inside the sandbox's own network namespace. */
export const FORWARDER_PORT = 3128;

/** The forwarder's own source file (plain JavaScript, nothing to compile). */
export function forwarderPath(): string {
  return decodeURIComponent(new URL("./forwarder.js", import.meta.url).pathname);
}

// $1 deno, $2 forwarder.js, $3 port, $4 socket; the rest is the command. The forwarder prints
// "ready" once it listens; its stdin, stdout and stderr are none of the command's.
const PROLOGUE = [
  "deno=$1 forwarder=$2 port=$3 socket=$4; shift 4",
  // No update check: it would ask the proxy for dl.deno.land on the model's behalf.
  'exec 3< <(DENO_NO_UPDATE_CHECK=1 exec "$deno" run --quiet --no-config --no-lock --no-prompt --cached-only ' +
  '"--allow-net=127.0.0.1:$port,unix:$socket" "--allow-read=$socket" ' +
  '"--allow-write=$socket" ' +
  '"$forwarder" "$port" "$socket" </dev/null 2>/dev/null)',
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
    ...argv,
  ];
}

/**
 * The forwarder started on its own (a container's, whose whole network namespace it serves):
 * `deno` runs `forwarder` with permission for the loopback port and `socket` only, offline.
 * It prints "ready" once it listens.
 */
export function forwarderArgv(deno: string, forwarder: string, socket: string): string[] {
  return [
    deno,
    "run",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--no-prompt",
    "--cached-only",
    `--allow-net=127.0.0.1:${FORWARDER_PORT},unix:${socket}`,
    `--allow-read=${socket}`,
    `--allow-write=${socket}`,
    forwarder,
    String(FORWARDER_PORT),
    socket,
  ];
}

/**
 * The files the prologue runs, shown read-only inside the sandbox at their own paths (Deft's code
 * or Deno may live under a folder the sandbox replaces, such as /tmp).
 */
export function forwarderFiles(): string[] {
  return [Deno.execPath(), forwarderPath()];
}

/** The variables that point every client at the forwarder; `NO_PROXY` empty. */
export function proxyEnvironment(): Record<string, string> {
  const url = `http://127.0.0.1:${FORWARDER_PORT}`;
  const env: Record<string, string> = {};
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]) {
    env[name] = url;
    env[name.toLowerCase()] = url;
  }
  env.NO_PROXY = "";
  env.no_proxy = "";
  return env;
}
