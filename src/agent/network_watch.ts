/**
 * Every destination the network proxy decides on, made visible while a task runs: a refusal as
 * the console line `network: blocked HOST:PORT (REASON)`, the first use of an allowed one as
 * `network: allowed HOST:PORT`, and each decision in the trajectory's `network` list (host and
 * port only), and to a console that emits events (`stream-json`) as a `network` event. The proxy itself (src/policy/network) never prints; the spans are its own.
 */
import { onNetworkDecision } from "../policy/network/decisions.ts";
import type { TrajectoryRecorder } from "../trajectory/recorder.ts";
import type { AgentConsole } from "./console.ts";

/** Most decisions kept in one trajectory; past it, `network_not_recorded` counts the rest. */
const MAX_RECORDED = 2000;

/** Watches the proxy's decisions for one task; returns the function that stops watching. */
export function watchNetwork(console: AgentConsole, recorder: TrajectoryRecorder): () => void {
  const shown = new Set<string>();
  return onNetworkDecision((d) => {
    const where = `${d.host}:${d.port}`;
    const list = (recorder.data.network ??= []);
    if (list.length < MAX_RECORDED) {
      list.push({
        time: new Date().toISOString(),
        host: d.host,
        port: d.port,
        allowed: d.allowed,
        reason: d.reason,
      });
    } else {
      recorder.data.network_not_recorded = (recorder.data.network_not_recorded ?? 0) + 1;
    }
    console.network?.({ host: d.host, port: d.port, allowed: d.allowed, reason: d.reason });
    if (!d.allowed) console.note(`network: blocked ${where} (${d.reason})`);
    else if (!shown.has(where)) {
      shown.add(where);
      console.note(`network: allowed ${where}`);
    }
  });
}
