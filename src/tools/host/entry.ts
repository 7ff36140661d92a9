/** Which module a tool-host worker runs. main.ts names itself, so a bundled Deft hosts itself. */

let entry: string | undefined;

/** Sets the worker's module URL. */
export function setWorkerEntry(url: string): void {
  entry = url;
}

/** The worker's module URL: main.ts when it set one, else the source-tree worker entry. */
export function workerEntry(): string {
  return entry ?? new URL("./worker_main.ts", import.meta.url).href;
}
