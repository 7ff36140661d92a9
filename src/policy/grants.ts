/**
 * What Deft itself was granted, and how to say what is missing. Deno refuses a worker any
 * permission its parent lacks ("Can't escalate parent thread permissions"), so the tool worker
 * gets what it needs intersected with what Deft has; a call that then needs the rest fails with a
 * message naming the Deno flag to add.
 */
import { isAbsolute, relative, resolve } from "./paths.ts";
import { readEnv } from "../env.ts";

/** The kinds of Deno permission Deft asks about. */
export type GrantKind = "read" | "write" | "run" | "net" | "env" | "sys" | "ffi" | "import";

/** True when Deft holds `descriptor` now (never prompts; a failing query counts as not granted). */
export function granted(descriptor: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(descriptor).state === "granted";
  } catch {
    return false;
  }
}

/** Keeps the paths Deft may `kind` (read or write). */
export function grantedPaths(kind: "read" | "write", paths: readonly string[]): string[] {
  return paths.filter((path) => granted({ name: kind, path }));
}

/** Keeps the programs Deft may start. */
export function grantedPrograms(programs: readonly string[]): string[] {
  return programs.filter((command) => granted({ name: "run", command }));
}

/** The command-line flag that grants `kind` on `target`, e.g. `--allow-run=bash`. */
export function flagFor(kind: string, target?: string): string {
  const name = kind === "import" ? "import" : kind;
  return target ? `--allow-${name}=${target}` : `--allow-${name}`;
}

/**
 * The flags that grant a process the file, program and environment permissions of `permissions`
 * (a worker's set), so that it can start a worker with exactly that set. A path with a comma
 * cannot be written in a flag; its kind is then granted whole, left to narrower fences (the
 * worker's own permissions, a sandbox).
 *
 * Programs are granted whole too when the set may write a folder they are found in (a workspace
 * at /, /usr or /usr/bin): Deno denies a process that may run only named programs the right to
 * write those programs' files, so a process started with `--allow-write=/usr --allow-run=bash`
 * holds less than "write /usr" and may not give it to a worker ("Can't escalate parent thread
 * permissions"). The process these flags start only relays to the worker, which keeps its list.
 */
export function permissionFlags(permissions: Deno.PermissionOptionsObject): string[] {
  const flags: string[] = [];
  const runWhole = writesProgramFolder(permissions);
  for (const kind of ["read", "write", "run", "env"] as const) {
    const value = permissions[kind];
    if (value === true || value === "inherit" || (kind === "run" && runWhole)) {
      flags.push(flagFor(kind));
    } else if (Array.isArray(value) && value.length > 0) {
      const items = value.map(String);
      flags.push(
        items.some((i) => i.includes(",")) ? flagFor(kind) : flagFor(kind, items.join(",")),
      );
    }
  }
  return flags;
}

/**
 * True when `permissions` name programs to run and may write a folder on PATH, where Deno would
 * find them (the folders as written and as they really are: /bin is /usr/bin on most systems).
 */
export function writesProgramFolder(permissions: Deno.PermissionOptionsObject): boolean {
  const { run, write } = permissions;
  if (!Array.isArray(run) || run.length === 0 || !Array.isArray(write)) return false;
  const folders = new Set<string>();
  for (const dir of (readEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(":")) {
    if (!isAbsolute(dir)) continue;
    folders.add(resolve(dir));
    try {
      folders.add(Deno.realPathSync(dir));
    } catch {
      // Missing, or not ours to look at: the folder as written still counts.
    }
  }
  return write.map(String).some((path) =>
    [...folders].some((folder) => folder === path || isWithin(resolve(path), folder))
  );
}

function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/** Parses Deno's "Requires read access to "/x"" into its kind and target. */
export function parseDenial(message: string): { kind: string; target?: string } | undefined {
  const match = /Requires (\w+) access(?: to "([^"]*)")?/.exec(message);
  if (!match) return undefined;
  return { kind: match[1], target: match[2] };
}

/** A sentence naming the flag Deft lacks for `path`, from the NotCapable error `e`. */
export function missingGrant(e: unknown, path: string): string {
  const kind = parseDenial(e instanceof Error ? e.message : String(e))?.kind ?? "read";
  return `Deft was not given Deno ${kind} permission on ${path}, which is inside the ` +
    `workspace: start Deft with ${flagFor(kind, path)} (or a folder above it).`;
}
