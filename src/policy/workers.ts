/**
 * The Deno workers Deft starts, with the permissions the policy gives each: the one place a
 * `Worker` is made (tests/policy/process_test.ts fails on `new Worker` anywhere else). A worker
 * made without `deno.permissions` inherits every permission of Deft's own; here every worker is
 * given a set on purpose.
 *
 * | worker                       | permissions                                              |
 * |------------------------------|----------------------------------------------------------|
 * | tool worker (tools/host)     | `boundary.ts`: the workspace, the cache, a temp folder … |
 * | code graph's parser workers  | `parserWorkerPermissions`: none at all                   |
 */

/**
 * The code graph's parser workers: none. They parse the text they are sent with grammars they
 * are sent (their code and the tree-sitter library come as Blob URLs, which need no
 * permission), and post back what they found; they read, write, start and reach nothing.
 */
export function parserWorkerPermissions(): Deno.PermissionOptionsObject {
  return {
    read: false,
    write: false,
    net: false,
    env: false,
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/** Starts the module worker at `url` with exactly `permissions` (a set made in src/policy). */
export function startWorker(
  url: string | URL,
  permissions: Deno.PermissionOptionsObject,
  name?: string,
): Worker {
  return new Worker(url, { type: "module", name, deno: { permissions } } as WorkerOptions);
}
