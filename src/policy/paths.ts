/**
 * POSIX path arithmetic without `node:path`: the same answers as `node:path` gives on Linux, for
 * the modules on every start-up path (src/policy's containment, grants and sandbox). The first
 * `node:` module a process loads starts Node's compatibility layer (~6 ms of every `deft tool`),
 * and these few functions are all those modules need from it. Pure string work, except `resolve`,
 * which reads the current directory when no argument is absolute (as `node:path` does).
 *
 * tests/policy/paths_test.ts holds each function to `node:path` on a table of awkward inputs.
 */

/** The separator of path segments. */
export const sep = "/";

/** The separator of the entries of `PATH`. */
export const delimiter = ":";

/** True when `path` starts at the root. */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/**
 * `path` with `.` and `..` segments worked out and repeated slashes folded; a trailing slash is
 * kept. `..` never climbs above the root of an absolute path; a relative one keeps its leading
 * `..` segments. The empty path is `.`.
 */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const body = segments(path, absolute).join("/");
  const trailing = path.endsWith("/") ? "/" : "";
  if (absolute) return body === "" ? "/" : `/${body}${trailing}`;
  return body === "" ? `.${trailing}` : `${body}${trailing}`;
}

/** The non-empty `parts` joined with `/`, then normalized (`.` when none is non-empty). */
export function join(...parts: string[]): string {
  const joined = parts.filter((p) => p !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}

/**
 * The absolute path `parts` name, read right to left until one is absolute (else from the
 * current directory), normalized, with no trailing slash (except the root itself).
 */
export function resolve(...parts: string[]): string {
  let path = "";
  for (let i = parts.length - 1; i >= 0 && !isAbsolute(path); i--) {
    if (parts[i] !== "") path = path === "" ? parts[i] : `${parts[i]}/${path}`;
  }
  if (!isAbsolute(path)) path = path === "" ? Deno.cwd() : `${Deno.cwd()}/${path}`;
  return `/${segments(path, true).join("/")}`;
}

/**
 * The relative path from `from` to `to`, both resolved first: `""` when they are the same,
 * `..` segments up to their common folder, then the rest of `to`.
 */
export function relative(from: string, to: string): string {
  const a = segments(resolve(from), true);
  const b = segments(resolve(to), true);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}

/**
 * The folder part of `path`: everything before its last segment, trailing slashes ignored
 * (`/` for a segment at the root, `.` for a lone relative one, `//` kept as `node:path` keeps it).
 */
export function dirname(path: string): string {
  if (path === "") return ".";
  const rooted = path.startsWith("/");
  // The last slash before the last segment, trailing slashes skipped.
  let end = -1;
  let inSegment = false;
  for (let i = path.length - 1; i >= 1; i--) {
    if (path[i] === "/") {
      if (inSegment) {
        end = i;
        break;
      }
    } else inSegment = true;
  }
  if (end === -1) return rooted ? "/" : ".";
  if (rooted && end === 1) return "//";
  return path.slice(0, end);
}

/**
 * The segments of `path` with `.` and `..` worked out: a `..` drops the segment before it; at
 * the start of an absolute path it is dropped itself, of a relative one it is kept.
 */
function segments(path: string, absolute: boolean): string[] {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  return out;
}
