/**
 * Per-file mutual exclusion inside one process. Tool calls may run in parallel; two calls that
 * read-modify-write the same file must not interleave, or one edit would be lost. Calls on
 * different files still run at once.
 */

const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` once every earlier call for the same `key` (a real path) has finished, and returns
 * its result. Calls for one key run in the order they were made.
 *
 * @example
 * ```ts
 * await withFileLock("/repo/a.txt", async () => {
 *   const text = await Deno.readTextFile("/repo/a.txt");
 *   await Deno.writeTextFile("/repo/a.txt", text + "more\n");
 * });
 * ```
 */
export async function withFileLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((r) => release = r);
  const tail = previous.then(() => done);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    // Forget the key once nobody queued behind us, so the map does not grow with every file.
    if (tails.get(key) === tail) tails.delete(key);
  }
}
