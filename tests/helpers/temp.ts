/**
 * A temporary folder that removes itself: `await using dir = await tempDir();` and `dir.path`
 * is gone when the block ends, whether the test passed or threw.
 */

/** A temporary folder; `remove()` or leaving an `await using` block deletes it. */
export interface TempDir extends AsyncDisposable {
  /** Its real path (symbolic links resolved), as Deft reports paths. */
  readonly path: string;
  remove(): Promise<void>;
}

/** Makes a fresh folder named `prefix…` under the system's temp dir (or `options.dir`). */
export async function tempDir(
  prefix = "deft-test-",
  options: { dir?: string } = {},
): Promise<TempDir> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix, dir: options.dir }));
  // A test may have removed it, or made part of it unreadable on purpose: neither fails it.
  const remove = () => Deno.remove(path, { recursive: true }).catch(() => {});
  return { path, remove, [Symbol.asyncDispose]: remove };
}
