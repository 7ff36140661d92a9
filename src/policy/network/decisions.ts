/**
 * Who hears the network proxy's decisions: the layers above subscribe (the console line, the
 * trajectory); the proxy reports. Kept apart from the proxy so a subscriber loads no Node
 * compatibility modules on Deft's start-up path.
 */
import type { NetworkDecision } from "./decider.ts";

type Listener = (decision: NetworkDecision) => void;
const listeners = new Set<Listener>();

/** Calls `listener` with every decision of this process's proxies; returns the unsubscriber. */
export function onNetworkDecision(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Tells every listener of `decision`; a listener that throws costs only itself. */
export function reportNetworkDecision(decision: NetworkDecision): void {
  for (const listener of listeners) {
    try {
      listener(decision);
    } catch {
      // A listener's failure is its own; the proxy goes on.
    }
  }
}
