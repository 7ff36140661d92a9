/**
 * The Deno permissions tools run with: read and write only the workspace and Deft's own cache and
 * temp dirs, run only bash, bubblewrap and git, no network. They are applied to the worker that
 * hosts the tools (src/tools/host), on top of the real-path checks the tools make themselves.
 */

/** Directories besides the workspace that tools may use. */
export interface ToolDirs {
  workspace: string;
  /** Deft's cache (the code graph's databases). */
  cache?: string;
  /** Temporary files (saved command output). */
  temp?: string;
  /** Deft's own code, readable only: modules the tools load lazily live there. */
  code?: string;
}

/** Programs tools may start. bash runs the user's commands; they are not Deno's to police. */
export const TOOL_PROGRAMS = ["bash", "bwrap", "git"] as const;

/** The worker permission set for `dirs`. */
export function toolPermissions(dirs: ToolDirs): Deno.PermissionOptionsObject {
  const paths = [dirs.workspace, dirs.cache, dirs.temp].filter((p): p is string => !!p);
  return {
    read: dirs.code ? [...paths, dirs.code] : paths,
    write: paths,
    run: [...TOOL_PROGRAMS],
    net: false,
    env: true,
    sys: false,
    ffi: false,
    import: false,
  };
}

/** Explains a Deno permission denial in the words a model can act on. */
export function explainDenial(message: string, workspace: string): string | undefined {
  const match = /Requires (\w+) access(?: to "([^"]*)")?/.exec(message);
  if (!match) return undefined;
  const [, kind, target] = match;
  const what = target ? ` (${target})` : "";
  switch (kind) {
    case "read":
    case "write":
      return `${target ?? "The path"} is outside the workspace ${workspace}: tools may ${kind} ` +
        `only inside it.`;
    case "net":
      return `Network access${what} is not allowed for tools. Run network commands with the bash ` +
        `tool instead (the sandbox may still forbid them).`;
    case "run":
      return `Starting the program${what} is not allowed for tools; only ` +
        `${TOOL_PROGRAMS.join(", ")} may be started.`;
    default:
      return `Tools are not allowed ${kind} access${what}.`;
  }
}

/**
 * Where Deft's own code lives, for read access: the source tree when running from source (its
 * modules load lazily), else the single bundled file; none for a compiled binary.
 */
export function codeLocation(entry: string): string | undefined {
  if (!entry.startsWith("file:")) return undefined;
  const file = decodeURIComponent(new URL(entry).pathname);
  const dir = file.slice(0, file.lastIndexOf("/")) || "/";
  for (let d = dir; d !== ""; d = d.slice(0, d.lastIndexOf("/"))) {
    try {
      Deno.statSync(`${d}/deno.json`);
      return d;
    } catch { /* not the source root; look higher */ }
  }
  return file;
}
