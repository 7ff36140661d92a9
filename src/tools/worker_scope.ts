/**
 * What code knows of the tool worker it may run in: whether it runs in one, and how a tool tells
 * the main thread which process groups it started. A worker that is terminated (a call past its
 * deadline) cannot clean up after itself, so the main thread kills the groups still running.
 * Outside a worker reports go nowhere.
 *
 * It sits below the tool host and the tools alike: the shell reports its groups from here, and
 * the host (src/tools/host/) reads the reports, without the tools importing the host.
 */

/** A process group a tool started (`running`) or that ended; the host kills it with the worker. */
export interface ChildReport {
  type: "child";
  id: -1;
  pid: number;
  running: boolean;
}

interface WorkerScope {
  postMessage(message: ChildReport): void;
}

/** True when this code runs inside a worker. */
export function inWorker(): boolean {
  return typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== "undefined";
}

/** Reports `child` (started with `detached: true`, so its pid is its group) until it exits. */
export function reportChild(child: Deno.ChildProcess): void {
  if (!inWorker()) return;
  const scope = globalThis as unknown as WorkerScope;
  const pid = child.pid;
  scope.postMessage({ type: "child", id: -1, pid, running: true });
  child.status.then(
    () => scope.postMessage({ type: "child", id: -1, pid, running: false }),
    () => {},
  );
}
