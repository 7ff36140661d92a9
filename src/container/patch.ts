/**
 * A container's workspace as a place to compute the patch (`GitPlace`, policy/git.ts): git
 * hardened as on the host and run through `exec`, the private index and object stores in Deft's
 * folder inside (INSIDE_TEMP), and the file steps (measuring new files, finding a FIFO where git
 * reads an ignore list) done by small POSIX shell steps inside. The patch algorithm itself is the
 * host's (src/agent/patch.ts `patchIn`, `recordBaselineIn`), so its filters apply here too.
 *
 * Everything inside is the model's: every step has a deadline and bounded output, and reads no
 * answer as more than data (a listing of names, a number per file). A step stopped by a limit is
 * killed inside too, and the container's guard (one per `Container`, shared by every place made
 * for it: the patch, the baseline, the checkpoints) refuses every later step at once, so a `git`
 * that never returns costs one deadline, not one per step.
 */
import { type GitLimits, type GitPlace, splitNul } from "../policy/git.ts";
import { ContainerGitGuard, runGitInContainer, runInContainer } from "../policy/git_container.ts";
import type { Container } from "./container.ts";
import { INSIDE_TEMP } from "./inside.ts";

/**
 * Measures the NUL-separated paths on stdin: one line per path, `1` for a regular file (not a
 * symlink) above $2 bytes, or above $1 bytes with a NUL in its first 8000; else `0`. Only regular
 * files are read.
 */
const LARGE_FILES_SCRIPT = `xargs -0 -r sh -c '
binary_over=$1; any_over=$2; shift 3
for f do
  if [ -h "$f" ] || [ ! -f "$f" ]; then echo 0; continue; fi
  size=$(stat -c %s -- "$f" 2>/dev/null) || { echo 0; continue; }
  if [ "$size" -gt "$any_over" ]; then echo 1
  elif [ "$size" -gt "$binary_over" ]; then
    kept=$(head -c 8000 -- "$f" | tr -d "\\\\000" | wc -c)
    total=$(head -c 8000 -- "$f" | wc -c)
    if [ "$kept" -lt "$total" ]; then echo 1; else echo 0; fi
  else echo 0; fi
done' sh "$1" "$2" _`;

/**
 * Prints, NUL-separated, each \`.gitignore\`/\`.gitattributes\` below the working folder that is
 * neither a regular file, a folder nor a symlink (\`.git\` not entered), then each argument that
 * exists and is neither a regular file nor a folder.
 */
const SPECIAL_FILES_SCRIPT =
  `find . -name .git -prune -o \\( -name .gitignore -o -name .gitattributes \\) \\
  ! -type f ! -type d ! -type l -print0
for f do
  if [ -e "$f" ] && [ ! -f "$f" ] && [ ! -d "$f" ]; then printf '%s\\0' "$f"; fi
done`;

/** The guard of each container Deft's steps ran in (see policy/git_container.ts). */
const guards = new WeakMap<Container, ContainerGitGuard>();

/** The guard of `container`'s steps: one for as long as the container object lives. */
export function containerGuard(container: Container): ContainerGitGuard {
  let guard = guards.get(container);
  if (!guard) guards.set(container, guard = new ContainerGitGuard());
  return guard;
}

/** The container's workspace as a place for the patch; `limits` for every step (tests). */
export function containerPlace(container: Container, limits: GitLimits = {}): GitPlace {
  const { cli, id, workspace } = container;
  const guard = containerGuard(container);
  const inside = (argv: string[], what: string, stdin?: Uint8Array, cwd?: string) =>
    runInContainer(
      cli,
      id,
      { argv, workdir: cwd },
      `${what} (in the container)`,
      stdin,
      limits,
      guard,
    );
  const mustInside = async (argv: string[], what: string, stdin?: Uint8Array, cwd?: string) => {
    const out = await inside(argv, what, stdin, cwd);
    if (!out.ok) throw new Error(`${what} failed in the container: ${out.err.trim()}`);
    return out;
  };
  return {
    where: `the container ${id.slice(0, 12)}`,
    git: (args, env = {}, stdin) =>
      runGitInContainer(cli, id, workspace, args, env, stdin, limits, guard),
    async scratch(kind) {
      const made = await mustInside(
        ["mktemp", "-d", `${INSIDE_TEMP}/${kind}.XXXXXX`],
        "mktemp",
      );
      const folder = made.out.trim();
      if (!/^\/tmp\/deft\/[a-z]+\.[A-Za-z0-9]+$/.test(folder)) {
        throw new Error(`could not make a scratch folder in the container (mktemp said ${folder})`);
      }
      await mustInside(["mkdir", "--", `${folder}/objects`], "mkdir");
      return folder;
    },
    async remove(folder) {
      await inside(["rm", "-rf", "--", folder], "rm").catch(() => {});
    },
    async copyIndex(from, to) {
      await mustInside(["cp", "-p", "--", from, to], "cp");
    },
    async largeFiles(paths, sizes) {
      if (paths.length === 0) return [];
      const out = await mustInside(
        ["sh", "-c", LARGE_FILES_SCRIPT, "sh", String(sizes.binaryOver), String(sizes.anyOver)],
        "measuring new files",
        joinNul(paths),
        workspace,
      );
      const lines = out.out.split("\n").filter((l) => l !== "");
      if (lines.length !== paths.length) {
        throw new Error(
          `measuring new files in the container gave ${lines.length} answers for ${paths.length} ` +
            "files",
        );
      }
      return lines.map((l) => l.trim() === "1");
    },
    async filesOver(paths, bytes) {
      if (paths.length === 0) return [];
      // One find for the whole workspace: a stat per file through a shell would take minutes in
      // a large repository. Its answer is a set of names, nothing more.
      const out = await mustInside(
        [
          "find",
          ".",
          "-name",
          ".git",
          "-prune",
          "-o",
          "-type",
          "f",
          "-size",
          `+${bytes}c`,
          "-print0",
        ],
        "looking for very large files",
        undefined,
        workspace,
      );
      const found = new Set(
        out.out === "" ? [] : splitNul(out.bytes).map((name) => bytesKey(name.subarray(2))),
      );
      return paths.map((path) => found.has(bytesKey(path)));
    },
    async specialFiles(extra) {
      const out = await mustInside(
        ["sh", "-c", SPECIAL_FILES_SCRIPT, "sh", ...extra],
        "looking for FIFOs",
        undefined,
        workspace,
      );
      return out.out.split("\0").filter(Boolean).map((p) => p.replace(/^\.\//, ""));
    },
  };
}

function joinNul(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length + 1, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length + 1;
  }
  return all;
}

/** A name's bytes as a string key (names need not be UTF-8). */
function bytesKey(name: Uint8Array): string {
  return Array.from(name, (b) => b.toString(16).padStart(2, "0")).join("");
}
