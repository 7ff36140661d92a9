/**
 * The tool hosts inside the sandbox. With `sandbox` other than `none`, the tools that touch files
 * do not run in Deft's own process: Deft starts itself again as `deft __tool-host` inside
 * bubblewrap, with the same confinement as the shell (no network, no host sockets, its own PID
 * namespace, dying with Deft). That process runs the usual permission-fenced worker (relay.ts),
 * so Deno's permissions stay a second fence. Messages are the worker's, one JSON object a line
 * over stdin and stdout.
 *
 * There are two such hosts, by what they may write (`placeOf` decides which tool goes where):
 * - the editors' (`sandboxed`): the workspace and the host's private temp folder, nothing else.
 *   Every path the model names leads here, and a folder the model's shell swaps for a symlink
 *   mid-call can lead a write nowhere the shell could not write itself.
 * - the code graph's (`sandboxed-cache`): the graph's folder in Deft's cache (which holds other
 *   workspaces' databases too) and its private temp folder, the workspace read-only. It writes
 *   the cache only at paths Deft makes from the workspace's own real path, never at one the model
 *   names, and no path of the model's can lead it to write anything else.
 */
import type { BootMessage } from "./protocol.ts";
import { isAbsolute, join } from "../../policy/paths.ts";
import { deftCacheDir, denoDir } from "../../policy/dirs.ts";
import { entryOf } from "../catalog.ts";
import { deftArgv, takesPermissionFlags } from "../../policy/self.ts";
import type { Boundary } from "../../policy/boundary.ts";
import { type Launch, processPolicy, spawnChild, toolHostLaunch } from "../../policy/process.ts";
import { flagFor, permissionFlags } from "../../policy/grants.ts";
import { shownByWorkspace, writableThroughWorkspace } from "../../policy/sandbox.ts";
import type { ToolSettings } from "../base.ts";
import type { SandboxedPlace } from "../registry.ts";
import type { LinkStarter } from "./link.ts";
import { describeStatus, linkProcess } from "./process_link.ts";
import { TOOL_HOST_COMMAND } from "./entry_points.ts";

/** A starter for the sandboxed host at `place` under `settings` (sandbox mode, bwrap). */
export function sandboxedLinkStarter(settings: ToolSettings, place: SandboxedPlace): LinkStarter {
  return (boundary, entry, events) => {
    const fence = processFence(boundary.permissions);
    const launch = sandboxedHostLaunch(settings, place, boundary, entry);
    const child = spawnChild(launch, { stdin: "piped" });
    const link = linkProcess(
      child,
      events,
      "the sandboxed tool host",
      (status, said) =>
        `the sandboxed tool host exited (${describeStatus(status)})${said ? `: ${said}` : ""}`,
    );
    link.send(
      {
        type: "boot",
        permissions: boundary.permissions,
        fencedProcess: !!fence && takesPermissionFlags(),
      } satisfies BootMessage,
    );
    return {
      post: link.send,
      terminate: () => {
        link.quiet();
        try {
          child.kill("SIGKILL");
        } catch {
          // Already gone.
        }
        link.closeInput();
      },
      reportsHostPids: false,
    };
  };
}

/**
 * How the sandboxed host at `place` is started for `boundary`: bubblewrap's argv and the child's
 * environment from the policy, with Deft inside (`deno run …flags entry __tool-host`). With
 * `inside`, that command runs in the same sandbox instead (the benchmarks time a bare `true`
 * there: the floor of this design).
 */
export function sandboxedHostLaunch(
  settings: ToolSettings,
  place: SandboxedPlace,
  boundary: Boundary,
  entry: string,
  inside: readonly string[] = [...hostDenoArgv(boundary, entry), TOOL_HOST_COMMAND],
): Launch {
  const cache = place === "sandboxed-cache";
  const ckgDir = boundary.context.settings.ckgDir;
  // A workspace that holds the graph's folder (Deft run on $HOME) stays writable for the graph:
  // binding a folder inside it that the model's shell can swap would be worse.
  const graphInWorkspace = !!ckgDir && writableThroughWorkspace(boundary.dirs.workspace, ckgDir);
  return toolHostLaunch(processPolicy(boundary.dirs.workspace, settings), {
    argv: inside,
    readOnly: codePaths(boundary, entry),
    writable: ownFolders(boundary, cache),
    readOnlyWorkspace: cache && !graphInWorkspace,
  });
}

/** The Deno command (program first) that runs `main` with the sandboxed host's flags. */
export function hostDenoArgv(boundary: Boundary, main: string): string[] {
  const fence = processFence(boundary.permissions);
  return deftArgv(fence ?? permissionFlags(boundary.permissions), main);
}

/**
 * Makes sure Deno's cache holds the compiled form of the host's code before a sandboxed host
 * starts. The host sees that cache read-only: a module it finds missing or stale there it
 * compiles itself and then fails to store, and Deno retries the store with pauses that add up to
 * 150 ms, at every start. Nothing but the sandboxed host loads its entry (relay.ts), so without
 * this its cache entry is never written. When the entry's compiled form is older than its source
 * (or missing), this process, whose cache is writable, loads the host's modules once: the
 * relay, the worker's side, and the implementations of `names`, which Deno then stores. Loading
 * them runs nothing (they only define). Skipped when Deft runs from a bundle or a compiled
 * executable (no TypeScript to compile) or when the cache cannot be found or read.
 */
export async function warmSandboxedCode(names: readonly string[]): Promise<void> {
  const sentinels = ["./relay.ts", "./worker.ts"].map((m) =>
    decodeURIComponent(new URL(m, import.meta.url).pathname)
  );
  try {
    const gen = denoGenDir();
    if (!gen) return;
    // A source touched without a change (a checkout) leaves the compiled form valid but older:
    // the sources' times when last warmed are kept in Deft's cache, so that is warmed once.
    const key = JSON.stringify([Deno.version.deno, ...sentinels.map(modifiedAt)]);
    const marker = join(deftCacheDir(), "sandbox-code.json");
    const fresh = (source: string) => {
      const compiled = modifiedAt(join(gen, "file", `${source}.js`));
      return compiled !== undefined && compiled >= (modifiedAt(source) ?? Infinity);
    };
    if (
      sentinels.every(fresh) ||
      (sentinels.every((s) => modifiedAt(join(gen, "file", `${s}.js`))) && readText(marker) === key)
    ) return;
    await Promise.all([import("./relay.ts"), import("./worker.ts")]);
    await Promise.all(names.map((name) => entryOf(name).load()));
    Deno.mkdirSync(deftCacheDir(), { recursive: true });
    Deno.writeTextFileSync(marker, key);
  } catch {
    // Only a start-up cost is at stake: the host compiles what it needs either way.
  }
}

function modifiedAt(path: string): number | undefined {
  try {
    return Deno.statSync(path).mtime?.getTime();
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

/** Where Deno keeps compiled modules (`$DENO_DIR/gen`), or undefined when not a source run. */
function denoGenDir(): string | undefined {
  if (!import.meta.url.startsWith("file:") || !import.meta.url.endsWith(".ts")) return undefined;
  const dir = denoDir();
  return dir ? join(dir, "gen") : undefined;
}

/**
 * The Deno flags that give the host's process exactly `permissions`, the worker's set, or
 * undefined when flags cannot say it (a path with a comma, a run grant widened to every program,
 * a network, system or FFI grant): the process then starts its worker as before. Deno lets a
 * process import from a few code hosts unasked; the worker may import from none, so neither may
 * this process (`--deny-import`).
 */
export function processFence(permissions: Deno.PermissionOptionsObject): string[] | undefined {
  const flags = permissionFlags(permissions);
  const exact: string[] = [];
  for (const kind of ["read", "write", "run", "env"] as const) {
    const value = permissions[kind];
    if (value === true) exact.push(flagFor(kind));
    else if (Array.isArray(value) && value.length > 0) exact.push(flagFor(kind, value.join(",")));
    else if (value !== false && value !== undefined && !Array.isArray(value)) return undefined;
  }
  const denied = (["net", "sys", "ffi", "import"] as const).every((kind) =>
    permissions[kind] === false
  );
  if (!denied || exact.join(" ") !== flags.join(" ")) return undefined;
  return [...flags, "--deny-import"];
}

/**
 * Deft's code and the Deno running it, shown read-only at their own paths: they may live where
 * the sandbox puts an empty folder (a bundle under /tmp). Paths in the workspace are already
 * visible and keep the workspace's own rules.
 */
function codePaths(boundary: Boundary, entry: string): string[] {
  const paths = [Deno.execPath()];
  if (boundary.dirs.code) paths.push(boundary.dirs.code);
  else if (entry.startsWith("file:")) paths.push(decodeURIComponent(new URL(entry).pathname));
  // Deno's cache, with the host's code compiled (`warmSandboxedCode`): under a HOME in /tmp (a CI
  // job's, a container's) the sandbox's private /tmp hides it, and the host then compiled its
  // code at every start and failed to store it (300 ms or more per one-off call).
  const cache = denoDir();
  if (cache && isAbsolute(cache) && isDirectory(cache)) paths.push(cache);
  // A path the workspace's bind already shows is not bound again (read-only, it would hide the
  // workspace's own writes there); one a private folder covers (/tmp with a workspace at /) is.
  return paths.filter((p) => isAbsolute(p) && !shownByWorkspace(boundary.dirs.workspace, p));
}

/**
 * The host's private temp folder and, for the code graph's host (`cache`), the graph's folder in
 * Deft's cache: writable inside (created first: bwrap binds folders). Everything else of Deft's
 * stays read-only; the editors' host cannot write the cache at all.
 *
 * The private temp folder is the editors' host's own: made fresh for this host (0700), used by
 * none of Deft's code (bash's saved output lives in the worker's own temp folder, not this one),
 * invisible to the model's shell, removed when the host closes. A raced path that leads a write
 * there only puts the model's own bytes where nothing reads them, for one session.
 */
function ownFolders(boundary: Boundary, cache: boolean): string[] {
  const folders: string[] = [];
  const own = cache ? [boundary.dirs.temp, boundary.context.settings.ckgDir] : [boundary.dirs.temp];
  for (const dir of own) {
    if (!dir || writableThroughWorkspace(boundary.dirs.workspace, dir)) continue;
    try {
      Deno.mkdirSync(dir, { recursive: true });
      folders.push(dir);
    } catch {
      // Not ours to create: the tools inside do without it (the worker says what is missing).
    }
  }
  return folders;
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}
