/**
 * Finding the programs the sandbox starts (bwrap, unshare, setpriv) and checking that one runs
 * here, where Deno may look; with an install hint when bwrap is missing.
 */
import { readEnv } from "../env.ts";
import { SandboxUnavailableError } from "./sandbox_options.ts";
import { probeLaunch, runChildSync } from "./spawn.ts";
import { delimiter, isAbsolute, join, resolve } from "./paths.ts";

/**
 * The bwrap executable to run: `bwrapPath` itself when it contains a slash, else the first match
 * on PATH. Throws `SandboxUnavailableError` with install instructions when it is missing. Where
 * Deno may not look (a permission-fenced tool host), the name is returned unchecked and starting
 * it reports a missing bwrap instead (see `bwrapNotFound`).
 */
export function findBwrap(bwrapPath = "bwrap"): string {
  const found = findExecutable(bwrapPath);
  if (found) return found;
  throw bwrapNotFound(bwrapPath.includes("/") ? resolve(bwrapPath) : bwrapPath);
}

/**
 * `program` itself (made absolute) when it contains a slash, else its first match on `path`
 * (default: Deft's PATH); undefined when it is not there. Where Deno may not look, the name is
 * returned unchecked.
 */
export function findExecutable(program: string, path?: string): string | undefined {
  if (program.includes("/")) {
    const abs = isAbsolute(program) ? program : resolve(program);
    return isExecutableFile(abs) === false ? undefined : abs;
  }
  // Without env permission (or no PATH), the usual places.
  const dirs = path ?? readEnv("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
  let unknown = false;
  for (const dir of dirs.split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, program);
    const found = isExecutableFile(candidate);
    if (found) return candidate;
    if (found === undefined) unknown = true;
  }
  return unknown ? program : undefined;
}

/** The error for a bwrap that is not there (also when starting `program` says so). */
export function bwrapNotFound(program: string): SandboxUnavailableError {
  const what = program.includes("/") ? program : `\`${program}\` (searched PATH)`;
  return new SandboxUnavailableError(missingMessage(what));
}

/** True or false when known; undefined when Deno may not look. */
function isExecutableFile(path: string): boolean | undefined {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      return undefined;
    }
    return false;
  }
}

function missingMessage(what: string): string {
  return `The sandbox needs bubblewrap, but ${what} was not found. ` +
    "Install it (Debian/Ubuntu: `apt-get install -y bubblewrap`; Fedora: " +
    "`dnf install bubblewrap`; Arch: `pacman -S bubblewrap`), or set `sandbox: none` to run " +
    "commands without a sandbox.";
}

/** True when `program args` can be started and exits 0 (started like every child: see spawn.ts). */
export function succeeds(program: string, args: string[]): boolean {
  try {
    return runChildSync(probeLaunch(program, args), { stdout: "null", stderr: "null" }).success;
  } catch {
    return false;
  }
}
