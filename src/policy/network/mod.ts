/**
 * The network list, enforced: the public face of src/policy/network. `ensureNetworkProxy` starts
 * the one proxy of this Deft process for a list (the sandbox's only way out) and hands back its
 * socket; `onNetworkDecision` lets the layers above show and record every destination the proxy
 * allowed or refused (the console line, the trajectory, spans): this layer never prints.
 */
import { type NetworkProxy, type Resolver, startNetworkProxy } from "./proxy.ts";
import type { NetworkList } from "./rules.ts";

export {
  type NetworkDecision,
  type NetworkProxy,
  type Resolver,
  startNetworkProxy,
} from "./proxy.ts";
export { decideByList, type NetworkEntry, type NetworkList, parseEntry } from "./rules.ts";
export { FORWARDER_PORT, forwarderArgv, proxyEnvironment } from "./launch.ts";
export { onNetworkDecision } from "./decisions.ts";
import { reportNetworkDecision as report } from "./decisions.ts";

const running = new Map<NetworkList, Promise<NetworkProxy>>();
/** The private folders of the proxies that are listening, removed at exit. */
const folders = new Set<string>();

/**
 * The socket of this process's proxy for `list`, started on first use and stopped when the
 * process ends. The same list object always gets the same proxy.
 */
export function ensureNetworkProxy(list: NetworkList, resolve?: Resolver): Promise<NetworkProxy> {
  let proxy = running.get(list);
  if (!proxy) {
    proxy = startNetworkProxy({ list, resolve, onDecision: report }).then((p) => {
      folders.add(folderOf(p));
      return p;
    });
    running.set(list, proxy);
    if (running.size === 1) globalThis.addEventListener("unload", closeAll);
  }
  return proxy;
}

/** Stops every proxy this process started (their private folders removed). */
export async function closeNetworkProxies(): Promise<void> {
  const all = [...running.values()];
  running.clear();
  await Promise.all(all.map(async (started) => {
    const p = await started.catch(() => undefined);
    if (!p) return;
    folders.delete(folderOf(p));
    await p.close().catch(() => {});
  }));
}

function folderOf(proxy: NetworkProxy): string {
  return proxy.socketPath.slice(0, proxy.socketPath.lastIndexOf("/"));
}

function closeAll(): void {
  // At exit nothing can be awaited: the sockets' folders go synchronously.
  for (const folder of folders) {
    try {
      Deno.removeSync(folder, { recursive: true });
    } catch {
      // Already gone.
    }
  }
  folders.clear();
}
