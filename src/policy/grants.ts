/**
 * What Deft itself was granted, and how to say what is missing. Deno refuses a worker any
 * permission its parent lacks ("Can't escalate parent thread permissions"), so the tool worker
 * gets what it needs intersected with what Deft has; a call that then needs the rest fails with a
 * message naming the Deno flag to add.
 */

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
 * (a worker's set). A path with a comma cannot be written in a flag; its kind is then granted
 * whole, left to narrower fences (the worker's own permissions, a sandbox).
 */
export function permissionFlags(permissions: Deno.PermissionOptionsObject): string[] {
  const flags: string[] = [];
  for (const kind of ["read", "write", "run", "env"] as const) {
    const value = permissions[kind];
    if (value === true || value === "inherit") flags.push(flagFor(kind));
    else if (Array.isArray(value) && value.length > 0) {
      const items = value.map(String);
      flags.push(
        items.some((i) => i.includes(",")) ? flagFor(kind) : flagFor(kind, items.join(",")),
      );
    }
  }
  return flags;
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
