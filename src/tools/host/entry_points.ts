/**
 * How Deft's code is entered as a tool host: the module a tool worker runs, and the argument that
 * makes a Deft process the sandboxed (or container's) host's relay. main.ts names itself as the
 * worker's module, so a bundled Deft hosts itself. Kept tiny: main.ts loads it on every start.
 */

/** The argument that makes Deft serve as the sandboxed tool host (`deft __tool-host`). */
export const TOOL_HOST_COMMAND = "__tool-host";

let entry: string | undefined;

/** Sets the worker's module URL. */
export function setWorkerEntry(url: string): void {
  entry = url;
}

/** The worker's module URL: main.ts when it set one, else the source-tree worker entry. */
export function workerEntry(): string {
  return entry ?? new URL("./worker_main.ts", import.meta.url).href;
}
