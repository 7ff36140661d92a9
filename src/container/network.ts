/**
 * A container session under the network list (`network:`): the container runs with
 * `--network none` (only its own loopback), the proxy's Unix sockets in Deft's process (HTTP and
 * SOCKS5) are bound in, and the same forwarder as in the sandbox (`deft __network-forwarder`, run
 * by the Deft already bound in for the tool host) listens on the container's 127.0.0.1:3128 and
 * 127.0.0.1:1080 for every process there.
 * The shell inside gets the proxy variables (the tool host's `networkForwarded`); a program that
 * ignores them has no route out.
 */
import type { ContainerBind, ContainerCli } from "../policy/container_cli.ts";
import { containerExecLaunch, spawnChild } from "../policy/process.ts";
import { forwarderArgv, socksSocketOf } from "../policy/network/launch.ts";
import { type DeftInside, INSIDE_ROOT } from "./inside.ts";
import { ContainerError } from "./runtime.ts";

/**
 * The label on a container Deft started under the list, naming the proxy's socket on the host:
 * its forwarder listens inside, so a Deft that attaches to it while that proxy still listens (a
 * batch's task, whose batch holds the proxy) gives its shells the proxy variables.
 */
export const NETWORK_LABEL = "deft.network";

/**
 * True when the container's `labels` say a forwarder was started inside and the proxy it relays
 * to still listens (its socket is there: a proxy's folder goes when its Deft ends).
 */
export function forwarded(labels: Record<string, string> | null | undefined): boolean {
  const socket = labels?.[NETWORK_LABEL];
  if (!socket?.startsWith("/")) return false;
  try {
    return Deno.statSync(socket).isSocket === true;
  } catch {
    return false;
  }
}

/** Where the proxy's socket appears inside; the SOCKS5 server's is beside it (socksSocketOf). */
export const INSIDE_PROXY_SOCKET = `${INSIDE_ROOT}/network/proxy.sock`;

/** How long the forwarder may take to listen (a loaded machine, a cold Deno). */
const FORWARDER_TIMEOUT_MS = 60_000;

/**
 * The binds that bring the proxy at `socket` (a host path) and the SOCKS5 server beside it in;
 * the forwarder is Deft itself, already bound in for the tool host.
 */
export function networkBinds(socket: string): ContainerBind[] {
  // Read-only: connecting needs no more, and nothing inside can change the host's sockets.
  return [
    { host: socket, container: INSIDE_PROXY_SOCKET, readOnly: true },
    { host: socksSocketOf(socket), container: socksSocketOf(INSIDE_PROXY_SOCKET), readOnly: true },
  ];
}

/**
 * Starts the forwarder in the running container `id` and waits until it listens. It lives as
 * long as the container (removing the container ends it). Throws ContainerError with what the
 * forwarder said when it does not start.
 */
export async function startForwarder(
  cli: ContainerCli,
  id: string,
  inside: DeftInside,
): Promise<void> {
  const child = spawnChild(
    containerExecLaunch(cli, id, {
      argv: forwarderArgv(INSIDE_PROXY_SOCKET, inside.self.exec, inside.self.main),
      // No update check: it would ask the proxy for dl.deno.land on nobody's behalf.
      env: { ...inside.env, DENO_NO_UPDATE_CHECK: "1" },
    }),
    { stdin: "null", stdout: "piped", stderr: "piped" },
  );
  const said = (async () => {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("\n") || text.length > 64) break;
    }
    return text;
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("timeout"), FORWARDER_TIMEOUT_MS);
  });
  const first = await Promise.race([said, late]).catch(() => "");
  clearTimeout(timer);
  if (first.trim() === "ready") {
    // It writes nothing more; Deft's exit must not wait for it (the container's end ends it).
    child.stderr.cancel().catch(() => {});
    child.unref();
    return;
  }
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  let error = "";
  try {
    error = new TextDecoder().decode(
      (await new Response(child.stderr).arrayBuffer()).slice(0, 2000),
    )
      .trim();
  } catch {
    // Nothing to tell.
  }
  await child.status.catch(() => {});
  throw new ContainerError(
    "the container's network forwarder did not start, so the network list cannot be used " +
      `there${first === "timeout" ? " (no answer in 60 s)" : ""}${error ? `: ${error}` : ""}. ` +
      "Remove `network` from the config to run without network.",
  );
}
