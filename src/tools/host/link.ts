/**
 * How a tool host reaches the place its tools run. The main thread speaks the same messages
 * (protocol.ts) to either kind: a Deno worker in this process, fenced by Deno's permissions, or
 * a separate Deft process inside bubblewrap that runs such a worker itself (sandboxed.ts).
 */
import type { Boundary } from "../../policy/boundary.ts";
import { startWorker } from "../../policy/workers.ts";
import type { HostReply, HostRequest } from "./protocol.ts";

/** One running place where tools run. */
export interface HostLink {
  /** Hands a request over; throws when it cannot be copied or sent. */
  post(request: HostRequest): void;
  /** Ends it at once, with everything it started. */
  terminate(): void;
  /**
   * Whether its `child` reports name host process groups the main thread may kill. A sandboxed
   * process's pids are its own namespace's and are never acted upon.
   */
  readonly reportsHostPids: boolean;
}

/** What a link tells the host that owns it. */
export interface LinkEvents {
  reply(reply: HostReply): void;
  /** It stopped or could not start; `message` says why. Called at most once. */
  failed(message: string): void;
}

/** Starts a link for tools inside `boundary`, whose worker module is `entry`. */
export type LinkStarter = (boundary: Boundary, entry: string, events: LinkEvents) => HostLink;

/** A worker in this process with the boundary's Deno permissions. */
export const startWorkerLink: LinkStarter = (boundary, entry, events) => {
  const worker = startWorker(entry, boundary.permissions);
  worker.onmessage = (e: MessageEvent<HostReply>) => events.reply(e.data);
  worker.onerror = (e) => {
    e.preventDefault();
    events.failed(e.message);
  };
  return {
    post: (request) => worker.postMessage(request),
    terminate: () => worker.terminate(),
    reportsHostPids: true,
  };
};
