/**
 * The host's layout as the sandbox needs it: which socket folders exist to hide, and the entries of
 * each folder above a folder the sandbox replaces (so it can be shown entry by entry).
 */
import { readEnv } from "../env.ts";
import { probeLaunch, runChildSync } from "./spawn.ts";
import { dirname, isAbsolute, join, resolve } from "./paths.ts";

/**
 * What the host's file system looks like where the sandbox splits it: the socket folders that
 * exist (real folders, not symlinks), and the entries of each folder above a folder the sandbox
 * replaces (/tmp, /dev, /proc, the socket folders), so the sandbox can show that folder's other
 * entries without binding the replaced one.
 */
export interface MountView {
  /** The socket folders to cover with an empty tmpfs. */
  hidden: readonly string[];
  /** Folder → its entries; a folder missing here is bound whole. */
  listings: ReadonlyMap<string, readonly MountEntry[]>;
}

/** One entry of a listed folder. */
export interface MountEntry {
  name: string;
  kind: "dir" | "file" | "symlink";
  /** A symlink's target, as it is written. */
  target?: string;
}

/** True when `path` is `dir` or inside it (both absolute, normalised). */
export function isBelow(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`);
}

/**
 * Where host services keep their Unix sockets (Docker, D-Bus, ssh-agent, systemd, X11), and where
 * container runtimes keep their containers' file systems: each is covered by an empty private
 * tmpfs inside the sandbox, so none of them can be connected to or read, and their mounts, which
 * come and go with the containers, are never bound.
 */
const SOCKET_DIRS = [
  "/run",
  "/var/run",
  "/var/tmp",
  "/dev/shm",
  "/var/lib/docker",
  "/var/lib/containers",
  "/tmp/.X11-unix",
];

/**
 * The socket folders that exist here and are real folders (not symlinks such as /var/run): see
 * `SOCKET_DIRS`, plus `$XDG_RUNTIME_DIR`.
 */
export function hiddenSocketDirs(): string[] {
  return [...mountView().hidden];
}

/**
 * The host's layout as the sandbox needs it (see `MountView`), looked at once per process for
 * each set of folders. bash looks, because the permission-fenced tool worker may not read paths
 * outside the workspace; it is started like every other child (spawn.ts). Where bash cannot
 * look, nothing is split or hidden beyond what was asked.
 */
export function mountView(extraHidden: readonly string[] = []): MountView {
  const candidates = [...SOCKET_DIRS];
  const runtime = readEnv("XDG_RUNTIME_DIR");
  if (runtime && isAbsolute(runtime)) candidates.push(resolve(runtime));
  const replaced = ["/dev", "/proc", "/tmp", ...candidates, ...extraHidden.map((d) => resolve(d))];
  // Folders above a replaced one, unless inside a replaced one themselves (no need to list /tmp).
  const toList = new Set<string>();
  for (const path of replaced) {
    for (let dir = dirname(path);; dir = dirname(dir)) {
      if (!replaced.some((r) => isBelow(r, dir))) toList.add(dir);
      if (dir === "/") break;
    }
  }
  const key = [...candidates, "\0", ...toList].join("\0");
  const known = viewCache.get(key);
  if (known) return known;
  const view = lookAtHost(candidates, [...toList]);
  viewCache.set(key, view);
  return view;
}

const viewCache = new Map<string, MountView>();

/** The bash that reports real folders among its first arguments, then lists the folders after `--`. */
const LOOK = [
  "shopt -s nullglob dotglob",
  "list=",
  "for a; do if [[ $a == -- ]]; then list=1; continue; fi",
  "  [[ -d $a && ! -L $a ]] || continue",
  '  if [[ -z $list ]]; then printf "H\\0%s\\0" "$a"; continue; fi',
  '  printf "D\\0%s\\0" "$a"',
  '  for e in "${a%/}"/*; do n=${e##*/}',
  '    if [[ -L $e ]]; then printf "L\\0%s\\0%s\\0" "$n" "$(readlink -- "$e")"',
  '    elif [[ -d $e ]]; then printf "d\\0%s\\0" "$n"',
  '    elif [[ -f $e ]]; then printf "f\\0%s\\0" "$n"; fi',
  "  done",
  "done",
].join("\n");

function lookAtHost(candidates: readonly string[], dirs: readonly string[]): MountView {
  return lookDirectly(candidates, dirs) ?? lookWithBash(candidates, dirs);
}

/**
 * The same look as `LOOK`, by Deno itself, where this process may read everything (Deft's main
 * thread): no bash and no `readlink` per symlink to start, most of a one-off call's mount set-up.
 * Deno asks for --allow-all to look at some system folders (/dev/shm): bash looks at those
 * alone. Undefined where Deno may not read the rest (the permission-fenced tool worker): bash
 * looks at everything then.
 */
function lookDirectly(
  candidates: readonly string[],
  dirs: readonly string[],
): MountView | undefined {
  try {
    if (Deno.permissions.querySync({ name: "read" }).state !== "granted") return undefined;
    // True, false, or undefined where Deno would not look.
    const realDir = (path: string) => {
      try {
        const info = Deno.lstatSync(path);
        return info.isDirectory && !info.isSymlink;
      } catch (e) {
        return e instanceof Deno.errors.NotCapable ? undefined : false;
      }
    };
    const seen = candidates.map((path) => ({ path, real: realDir(path) }));
    const unseen = seen.filter((c) => c.real === undefined).map((c) => c.path);
    const byBash = unseen.length > 0 ? lookWithBash(unseen, [], true) : undefined;
    if (unseen.length > 0 && !byBash) return undefined;
    const hidden = seen.filter((c) => c.real ?? byBash!.hidden.includes(c.path)).map((c) => c.path);
    const listings = new Map<string, MountEntry[]>();
    for (const dir of dirs) {
      const real = realDir(dir);
      if (real === undefined) return undefined;
      if (!real) continue;
      const entries: MountEntry[] = [];
      listings.set(dir, entries);
      let names: Deno.DirEntry[];
      try {
        names = [...Deno.readDirSync(dir)];
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) return undefined;
        continue; // Unreadable: like bash's glob, no entries.
      }
      // bash's glob order (C locale), so the mounts come out as they did.
      names.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      for (const entry of names) {
        const path = join(dir, entry.name);
        if (entry.isSymlink) {
          let target = "";
          try {
            target = Deno.readLinkSync(path);
          } catch (e) {
            if (e instanceof Deno.errors.NotCapable) return undefined;
          }
          entries.push({ name: entry.name, kind: "symlink", target });
        } else if (entry.isDirectory) entries.push({ name: entry.name, kind: "dir" });
        else if (entry.isFile) entries.push({ name: entry.name, kind: "file" });
      }
    }
    return { hidden, listings };
  } catch {
    return undefined;
  }
}

/** bash's look; with `strict`, undefined when bash cannot look (else an empty view). */
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict?: false,
): MountView;
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict: true,
): MountView | undefined;
function lookWithBash(
  candidates: readonly string[],
  dirs: readonly string[],
  strict = false,
): MountView | undefined {
  const hidden: string[] = [];
  const listings = new Map<string, MountEntry[]>();
  let out: Deno.CommandOutput;
  try {
    out = runChildSync(probeLaunch("bash", ["-c", LOOK, "deft", ...candidates, "--", ...dirs]));
  } catch {
    return strict ? undefined : { hidden, listings };
  }
  if (!out.success) return strict ? undefined : { hidden, listings };
  const words = new TextDecoder().decode(out.stdout).split("\0");
  let current: MountEntry[] | undefined;
  for (let i = 0; i < words.length - 1;) {
    const tag = words[i++];
    if (tag === "H") hidden.push(words[i++]);
    else if (tag === "D") listings.set(words[i++], current = []);
    else if (tag === "L") current?.push({ name: words[i++], kind: "symlink", target: words[i++] });
    else if (tag === "d") current?.push({ name: words[i++], kind: "dir" });
    else if (tag === "f") current?.push({ name: words[i++], kind: "file" });
    else break;
  }
  return { hidden, listings };
}
