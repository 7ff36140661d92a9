/**
 * Temporary folders for tests, the only way tests make them (tests/temp_folders_test.ts checks):
 * `await using dir = await tempDir();` and `dir.path` is gone when the block ends, whether the
 * test passed or threw. A helper that hands a path out of its block (a repository, a HOME) uses
 * `tempDirUntilExit()`: that folder goes when the test process ends, whatever the outcome.
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

/** Folders `tempDirUntilExit` made, removed when the process ends. */
const untilExit = new Set<string>();

/**
 * Makes a fresh folder like `tempDir` and returns its real path; it is removed when the test
 * process ends (pass or fail), or earlier by whoever removes it. For helpers that return a path.
 */
export async function tempDirUntilExit(
  prefix = "deft-test-",
  options: { dir?: string } = {},
): Promise<string> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix, dir: options.dir }));
  if (untilExit.size === 0) globalThis.addEventListener("unload", removeUntilExit);
  untilExit.add(path);
  return path;
}

function removeUntilExit(): void {
  for (const path of untilExit) {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch { /* removed already, or made unreadable on purpose */ }
  }
  untilExit.clear();
}
