/**
 * Knowing, without a stat walk, that nothing under the workspace changed since the last refresh.
 *
 * A file-system watcher (inotify, FSEvents, ReadDirectoryChangesW through `Deno.watchFs`) counts
 * every change that could matter to the graph into a generation number. Events travel from the
 * kernel through a runtime thread, so a change made just before a query may not have arrived yet:
 * `settle()` creates a uniquely named marker file in a folder the same watcher watches and waits
 * for its event. One watcher delivers its events in order, so once the marker's event is in, every
 * change made before the marker is counted too.
 *
 * Whenever the watcher cannot vouch for the tree (it failed to start, it stopped, the kernel queue
 * overflowed and asked for a rescan, the marker did not come back in time), callers are told to
 * do the full stat walk instead; the watcher only ever makes a refresh cheaper, never skips one
 * that is needed.
 */
import { join, sep } from "node:path";

/** How long to wait for the marker's event before giving up on the watcher for this query. */
const SETTLE_TIMEOUT_MS = 500;

/** Watches one workspace; see the module comment. */
export class ChangeWatcher {
  readonly #watcher: Deno.FsWatcher;
  readonly #markerDir: string;
  readonly #markerPrefix: string;
  readonly #waiting = new Map<string, () => void>();
  #generation = 0;
  #healthy = true;
  #markers = 0;

  private constructor(watcher: Deno.FsWatcher, markerDir: string) {
    this.#watcher = watcher;
    this.#markerDir = markerDir;
    this.#markerPrefix = join(markerDir, `.settle-${Deno.pid}-${crypto.randomUUID()}-`);
    this.#consume();
  }

  /**
   * Starts watching `root` (recursively) with markers in `markerDir`, a folder Deft owns. Returns
   * undefined when the platform, the permissions or the kernel's watch limit do not allow it.
   */
  static start(root: string, markerDir: string): ChangeWatcher | undefined {
    try {
      return new ChangeWatcher(Deno.watchFs([root, markerDir], { recursive: true }), markerDir);
    } catch {
      return undefined;
    }
  }

  /** Bumped by every change that may matter; compare two readings to know if anything moved. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Waits until every change made before this call is counted in `generation`. Returns false when
   * that cannot be promised (the watcher is unhealthy or the marker did not come back in time).
   */
  async settle(): Promise<boolean> {
    if (!this.#healthy) return false;
    const marker = `${this.#markerPrefix}${++this.#markers}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.#waiting.set(marker, () => resolve(true));
      timer = setTimeout(() => resolve(false), SETTLE_TIMEOUT_MS);
    });
    try {
      Deno.writeFileSync(marker, new Uint8Array(0));
    } catch {
      this.#waiting.delete(marker);
      clearTimeout(timer);
      return false;
    }
    const arrived = await seen;
    clearTimeout(timer);
    this.#waiting.delete(marker);
    try {
      Deno.removeSync(marker);
    } catch {
      // Already gone (another cleanup, a user): nothing to do.
    }
    return arrived && this.#healthy;
  }

  /** Stops watching. */
  close(): void {
    this.#healthy = false;
    try {
      this.#watcher.close();
    } catch {
      // already closed
    }
  }

  async #consume(): Promise<void> {
    try {
      for await (const event of this.#watcher) this.#observe(event);
    } catch {
      // The watcher broke: from now on every query walks.
    }
    this.#healthy = false;
    for (const wake of this.#waiting.values()) wake();
  }

  #observe(event: Deno.FsEvent): void {
    // The kernel dropped events: nothing can be vouched for any more.
    if (event.flag === "rescan") {
      this.#healthy = false;
      this.#generation++;
      return;
    }
    let relevant = false;
    for (const path of event.paths) {
      const wake = this.#waiting.get(path);
      if (wake) {
        wake();
        continue;
      }
      if (path.startsWith(this.#markerDir + sep)) continue;
      if (event.kind !== "access" && mayMatter(path)) relevant = true;
    }
    if (relevant) this.#generation++;
  }
}

/** Files that change all the time and are never sources nor, in practice, folders. */
const NOISE = /\.(pyc|pyo|o|obj|class|swp|swx|tmp|log|db|db-wal|db-shm|db-journal)$/;

/**
 * Whether a change to `path` can change the graph. Anything can, as far as a name tells (a folder
 * named `v1.2` takes its sources with it when it is renamed), except build droppings, editor swap
 * files and databases.
 */
function mayMatter(path: string): boolean {
  return !NOISE.test(path);
}
