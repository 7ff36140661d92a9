/**
 * The Deno permissions tools run with: read and write only the workspace and Deft's own cache and
 * temp dirs, run only bash, bubblewrap and git, no network. They are applied to the worker that
 * hosts the tools (src/tools/host), on top of the real-path checks the tools make themselves.
 */
import { resolve } from "./paths.ts";
import { flagFor, granted, grantedPaths, grantedPrograms, parseDenial } from "./grants.ts";
import { isInside } from "./workspace.ts";

/** Directories besides the workspace that tools may use. */
export interface ToolDirs {
  workspace: string;
  /** Deft's cache (the code graph's databases). */
  cache?: string;
  /** The session's private temp folder (saved command output). */
  temp?: string;
  /** Deft's own code, readable only: modules the tools load lazily live there. */
  code?: string;
  /** The read-only sandbox: the workspace is readable, not writable. */
  readOnly?: boolean;
}

/**
 * Programs tools may start. bash runs the user's commands; they are not Deno's to police.
 * `unshare` and `setpriv` hold the shell in a PID namespace where bwrap cannot.
 */
export const TOOL_PROGRAMS = ["bash", "bwrap", "git", "unshare", "setpriv"] as const;

/** The worker permission set tools need for `dirs`, before Deft's own grant is considered. */
export function toolPermissions(dirs: ToolDirs): Deno.PermissionOptionsObject {
  const own = [dirs.cache, dirs.temp].filter((p): p is string => !!p);
  const paths = [dirs.workspace, ...own];
  return {
    read: dirs.code ? [...paths, dirs.code] : paths,
    write: dirs.readOnly ? own : paths,
    run: [...TOOL_PROGRAMS],
    net: false,
    env: true,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * What the worker can actually get: `toolPermissions(dirs)` intersected with what Deft was
 * granted (a worker may not hold more than its parent). `missing` names the flags left out.
 */
export function grantedToolPermissions(
  dirs: ToolDirs,
): { permissions: Deno.PermissionOptionsObject; missing: string[] } {
  const wanted = toolPermissions(dirs);
  const missing: string[] = [];
  const keep = (kind: "read" | "write", list: unknown) => {
    const paths = list as string[];
    const ok = grantedPaths(kind, paths);
    for (const p of paths) if (!ok.includes(p)) missing.push(flagFor(kind, p));
    return ok;
  };
  const programs = grantedPrograms(TOOL_PROGRAMS);
  for (const p of TOOL_PROGRAMS) if (!programs.includes(p)) missing.push(flagFor("run", p));
  const env = granted({ name: "env" });
  if (!env) missing.push(flagFor("env"));
  return {
    permissions: {
      ...wanted,
      read: keep("read", wanted.read),
      write: keep("write", wanted.write),
      run: programs,
      env,
    },
    missing,
  };
}

/**
 * Explains a Deno permission denial in the words a model (and its user) can act on: a path
 * outside the tool's folders is outside the workspace; one inside them, or a tool program, is a
 * grant Deft was started without, and the message names the flag to add.
 */
export function explainDenial(
  message: string,
  workspace: string,
  dirs: Omit<ToolDirs, "workspace"> = {},
): string | undefined {
  const denial = parseDenial(message);
  if (!denial) return undefined;
  const { kind, target } = denial;
  const what = target ? ` (${target})` : "";
  switch (kind) {
    case "read":
    case "write": {
      const own = [workspace, dirs.cache, dirs.temp, kind === "read" ? dirs.code : undefined];
      const mine = target && own.find((d) => d && isInside(d, resolve(target)));
      if (mine && kind === "write" && dirs.readOnly && isInside(workspace, resolve(target))) {
        return `The workspace is read-only (sandbox: read-only): ${target} cannot be written.`;
      }
      if (mine) {
        return `Deft was not given Deno ${kind} permission on ${target}: start Deft with ` +
          `${flagFor(kind, mine)} (or a folder above it). [refused by Deno's permissions]`;
      }
      return `${target ?? "The path"} is outside the workspace ${workspace}: tools may ${kind} ` +
        `only inside it. [refused by Deno's permissions of the tool worker]`;
    }
    case "net":
      return `Network access${what} is not allowed for tools. Run network commands with the bash ` +
        `tool instead (the sandbox may still forbid them). [refused by Deno's permissions of the ` +
        `tool worker]`;
    case "run":
      if (target && (TOOL_PROGRAMS as readonly string[]).includes(target.split("/").pop()!)) {
        const name = target.split("/").pop()!;
        return `${name} needs ${flagFor("run", name)}: Deft was started without it. ` +
          `[refused by Deno's permissions]`;
      }
      return `Starting the program${what} is not allowed for tools; only ` +
        `${TOOL_PROGRAMS.join(", ")} may be started. [refused by Deno's permissions of the tool ` +
        `worker]`;
    case "env":
      return `Tools need environment access${what}: start Deft with ${flagFor("env")}. ` +
        `[refused by Deno's permissions]`;
    default:
      return `Tools are not allowed ${kind} access${what}. [refused by Deno's permissions of the ` +
        `tool worker]`;
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
