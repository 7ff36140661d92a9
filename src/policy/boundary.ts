/**
 * The tool worker's boundary, decided in one place: which folders it may read and write (the
 * workspace, Deft's cache, a private temp folder; Deft's code read-only), which programs it may
 * start, with no network — intersected with what Deft itself was granted — and the settings the
 * tools inside need to stay within it (where the temp folder and the code graph are).
 */
import { join } from "./paths.ts";
import { codeLocation, grantedToolPermissions, type ToolDirs } from "./permissions.ts";
import { isReadOnly } from "./read_only.ts";
import { createSessionTemp, type SessionTemp } from "./session_temp.ts";

/** The part of the tools' context the boundary reads and extends (tools/base.ts's ToolContext). */
export interface BoundaryContext {
  workspace: string;
  settings: {
    sandbox?: string;
    tempDir?: string;
    ckgDir?: string;
  };
}

/** Everything a tool host needs to start its worker inside the boundary. */
export interface Boundary<C extends BoundaryContext = BoundaryContext> {
  /** The folders, as the worker's denial messages name them. */
  dirs: ToolDirs;
  /** The worker's Deno permissions. */
  permissions: Deno.PermissionOptionsObject;
  /** Flags Deft lacks for the full set (a call needing one names it). */
  missing: string[];
  /** The context to build the tools with inside the worker. */
  context: C;
}

/** Where Deft's own folders are: the cache, and the parent of the private temp folder. */
export interface BoundaryPlaces {
  cache?: string;
  temp?: string;
}

/** Creates the private temp folder: in `places.temp`, else in the cache (whichever Deft may write). */
export function sessionTemp(places: BoundaryPlaces): SessionTemp | undefined {
  return createSessionTemp([places.temp, places.cache]);
}

/** The boundary for tools on `context.workspace`, whose worker runs the module `entry`. */
export function drawBoundary<C extends BoundaryContext>(
  context: C,
  places: BoundaryPlaces,
  entry: string,
  temp: SessionTemp | undefined,
): Boundary<C> {
  const dirs: ToolDirs = {
    workspace: context.workspace,
    cache: places.cache,
    temp: temp?.path,
    code: codeLocation(entry),
    readOnly: isReadOnly(context.settings),
  };
  const { permissions, missing } = grantedToolPermissions(dirs);
  return {
    dirs,
    permissions,
    missing,
    context: {
      ...context,
      settings: {
        ...context.settings,
        tempDir: temp?.path,
        // The graph lives in the cache the worker may write, found here where env is readable.
        ckgDir: context.settings.ckgDir ?? (places.cache ? join(places.cache, "ckg") : undefined),
      },
    },
  };
}
