/**
 * Tells the main thread which process groups the tools in this worker started. A worker that is
 * terminated (a call past its deadline) cannot clean up after itself, so the main thread kills
 * the groups still running. Outside a worker this does nothing.
 */

interface WorkerScope {
  postMessage(message: unknown): void;
}

const inWorker = typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !==
  "undefined";

/** Reports `child` (started with `detached: true`, so its pid is its group) until it exits. */
export function reportChild(child: Deno.ChildProcess): void {
  if (!inWorker) return;
  const scope = globalThis as unknown as WorkerScope;
  const pid = child.pid;
  scope.postMessage({ type: "child", id: -1, pid, running: true });
  child.status.then(
    () => scope.postMessage({ type: "child", id: -1, pid, running: false }),
    () => {},
  );
}
