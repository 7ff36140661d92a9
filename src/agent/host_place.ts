/**
 * The host as a place for the patch, the baseline and checkpoints (`GitPlace`, policy/git.ts):
 * git in the workspace (in the sandbox when there is one, with the git folders the sandbox would
 * hide shown read-only), scratch folders in Deft's temp folder, and the file steps (measuring
 * new files, finding a FIFO where git reads an ignore list) done here by lstat and readDir, never
 * by opening what is not a regular file. The container's counterpart is src/container/patch.ts.
 */
import { dirname, join, resolve } from "node:path";
import {
  type GitLimits,
  type GitPlace,
  type GitSandbox,
  gitScratch,
  runGit,
} from "../policy/git.ts";
import { hiddenSocketDirs } from "../policy/sandbox.ts";
import { isInside } from "../policy/workspace.ts";

/**
 * The host as a place: git in `dir` (inside `sandbox` unless its mode is `none`, with the git
 * folders the sandbox would hide shown read-only), scratch folders in Deft's temp folder (mode
 * 0700), each one writable to the git calls after it, as is `store` (a baseline's).
 *
 * `gitDir` (a folder of Deft's own, inside `store`): `dir` is in no repository, and this one
 * stands in for it — every git call that names no `GIT_DIR` of its own gets it, with `dir` as its
 * work tree, so a `.git` in or above `dir` (one planted later included) is never looked for, and
 * no repository folder is shown to the sandbox.
 */
export async function hostPlace(
  dir: string,
  sandbox: GitSandbox | undefined,
  limits: GitLimits | undefined,
  store?: string,
  gitDir?: string,
): Promise<GitPlace> {
  const shown = gitDir === undefined
    ? await shownSandbox(dir, sandbox)
    : sandbox?.mode === "none"
    ? undefined
    : sandbox && { ...sandbox, readOnlyPaths: [] };
  const writable: string[] = store ? [store] : [];
  // The folders the last walk for special files read, to read again only those that changed.
  const folders = new Map<string, FolderSeen>();
  const own = (env: Record<string, string>) =>
    gitDir === undefined || env.GIT_DIR !== undefined
      ? env
      : { ...env, GIT_DIR: gitDir, GIT_WORK_TREE: dir };
  return {
    where: dir,
    git: (args, env = {}, stdin) =>
      runGit(dir, args, {
        env: own(env),
        stdin,
        limits,
        sandbox: shown && { ...shown, writablePaths: [...writable] },
        // A common dir in Deft's own store or scratch folder holds the only config git reads.
        ownFolders: [...writable],
      }),
    async scratch(kind) {
      // In a sandbox: inside the view's own folder, which its git runner may already write.
      const folder = await gitScratch(shown, kind);
      writable.push(folder);
      return folder;
    },
    async remove(folder) {
      await Deno.remove(folder, { recursive: true }).catch(() => {});
    },
    async copyIndex(from, to) {
      await Deno.copyFile(from, to);
      const { atime, mtime } = await Deno.stat(from);
      await Deno.utime(to, atime ?? new Date(), mtime ?? new Date(0));
    },
    async largeFiles(paths, sizes) {
      const large: boolean[] = [];
      for (const path of paths) large.push(await isTooLarge(dir, path, sizes));
      return large;
    },
    async filesOver(paths, bytes) {
      const over: boolean[] = [];
      for (const path of paths) {
        // lstat opens nothing and returns at once: done synchronously (eight times faster than
        // one awaited call each, for a session's first checkpoint that measures every file),
        // the event loop let go between slices.
        if (over.length % SLICE === SLICE - 1) await yieldTurn();
        const info = lstatName(dir, path);
        over.push(info !== undefined && info.isFile && info.size > bytes);
      }
      return over;
    },
    specialFiles: (extra) => hostSpecialFiles(dir, extra, folders),
  };
}

/** `sandbox` (none for mode `none`) with the git folders it would hide shown read-only. */
async function shownSandbox(
  dir: string,
  sandbox: GitSandbox | undefined,
): Promise<GitSandbox | undefined> {
  const confined = sandbox?.mode === "none" ? undefined : sandbox;
  return confined && { ...confined, readOnlyPaths: await hiddenGitDirs(dir, confined.workspace) };
}

/**
 * The repository's git folders outside the workspace that the sandbox would hide (it has its own
 * /tmp): the `.git` of a repository the workspace is a subfolder of, or the folders a `.git` file
 * points to (a linked worktree's). Found by walking up from `dir`, without git. None is shown that
 * is or holds /tmp or a place where host services keep sockets (a `.git` file in the workspace is
 * the model's to write).
 */
async function hiddenGitDirs(dir: string, workspace: string): Promise<string[]> {
  let top = resolve(dir);
  while (!await exists(join(top, ".git"))) {
    if (top === dirname(top)) return [];
    top = dirname(top);
  }
  const dotGit = join(top, ".git");
  const dirs = [dotGit];
  const pointer = /^gitdir: (.+)$/m.exec(await readRegular(dotGit) ?? "")?.[1];
  if (pointer) {
    const gitDir = resolve(top, pointer.trim());
    const common = await readRegular(join(gitDir, "commondir"));
    dirs.push(gitDir, ...(common ? [resolve(gitDir, common.trim())] : []));
  }
  const hidden = ["/tmp", ...hiddenSocketDirs()];
  const shown: string[] = [];
  for (const path of dirs) {
    if (isInside(workspace, path) || hidden.some((h) => isInside(path, h))) continue;
    if (await exists(path)) shown.push(path);
  }
  return shown;
}

/** The text of `path` when it is a regular file (never a FIFO, which would block the read). */
async function readRegular(path: string): Promise<string | undefined> {
  const info = await Deno.lstat(path).catch(() => undefined);
  if (!info?.isFile) return undefined;
  return await Deno.readTextFile(path).catch(() => undefined);
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

const IGNORE_AND_ATTRIBUTES = new Set([".gitignore", ".gitattributes"]);

/**
 * A folder as a walk for special files read it: the folders in it and the ignore or attributes
 * files there that are not regular files. Read again when `key` (device, inode and ctime, which
 * every entry made, removed or renamed in it moves on and no one can set back) changes.
 */
interface FolderSeen {
  key: string;
  folders: string[];
  special: string[];
}

/**
 * The `.gitignore` and `.gitattributes` below `dir` (and in the folders above it, up to the
 * repository's top, which git reads too) that are neither regular files nor symlinks (git opens no
 * symlinked one), and the files of `extra` that exist and are not regular files. Walked by reading
 * folders, never by opening a file; `.git` folders are not entered. `known`: the folders the walk
 * before read (updated here); one that has not changed since is not read again.
 */
async function hostSpecialFiles(
  dir: string,
  extra: readonly string[],
  known: Map<string, FolderSeen>,
): Promise<string[]> {
  const found: string[] = [];
  const seen = new Map<string, FolderSeen>();
  let read = 0;
  const walk = async (folder: string) => {
    let now: FolderSeen;
    try {
      // Synchronous (a few times faster than awaiting each entry), the event loop let go
      // between slices.
      if (++read % (SLICE / 16) === 0) await yieldTurn();
      const info = Deno.lstatSync(folder);
      if (!info.isDirectory) return;
      const key = `${info.dev}:${info.ino}:${info.ctime?.getTime()}`;
      const before = known.get(folder);
      if (before?.key === key) now = before;
      else {
        const readAt = Date.now();
        now = { key, folders: [], special: [] };
        for (const entry of Deno.readDirSync(folder)) {
          const path = join(folder, entry.name);
          if (entry.isDirectory) {
            if (entry.name !== ".git") now.folders.push(path);
          } else if (IGNORE_AND_ATTRIBUTES.has(entry.name) && !entry.isFile && !entry.isSymlink) {
            now.special.push(path);
          }
        }
        // A folder changed less than two seconds before it was read (ctime is told in whole
        // seconds) could change again within the same second: it is read again next time.
        if (!info.ctime || info.ctime.getTime() + 2000 >= readAt) now.key = "";
      }
    } catch {
      return;
    }
    seen.set(folder, now);
    found.push(...now.special);
    for (const path of now.folders) await walk(path);
  };
  await walk(dir);
  known.clear();
  for (const [folder, now] of seen) known.set(folder, now);
  let above = resolve(dir);
  while (!await exists(join(above, ".git")) && above !== dirname(above)) {
    above = dirname(above);
    for (const name of IGNORE_AND_ATTRIBUTES) {
      const info = await Deno.lstat(join(above, name)).catch(() => undefined);
      if (info && !info.isFile && !info.isSymlink && !info.isDirectory) {
        found.push(join(above, name));
      }
    }
  }
  for (const path of extra) {
    // git follows a symlink here: what it leads to counts.
    const info = await Deno.stat(path).catch(() => undefined);
    if (info && !info.isFile && !info.isDirectory) found.push(path);
  }
  return found;
}

/**
 * True for a regular file above `anyOver` bytes, or above `binaryOver` with a NUL in its first
 * 8000 bytes. `name` is bytes from git; a name Deno cannot spell (not UTF-8) is not measured, and
 * goes in.
 */
async function isTooLarge(
  dir: string,
  name: Uint8Array,
  sizes: { binaryOver: number; anyOver: number },
): Promise<boolean> {
  let path: string;
  try {
    path = `${dir}/${new TextDecoder("utf-8", { fatal: true }).decode(name)}`;
  } catch {
    return false;
  }
  let file: Deno.FsFile | undefined;
  try {
    const info = Deno.lstatSync(path);
    if (!info.isFile || info.size <= sizes.binaryOver) return false;
    if (info.size > sizes.anyOver) return true;
    // Opened by name after lstat: a FIFO swapped in at that instant would block here. At the end
    // of a run the model's processes are gone; mid-run (--must-patch's check) the window stays.
    file = await Deno.open(path);
    const head = new Uint8Array(8000);
    const n = (await file.read(head)) ?? 0;
    return head.subarray(0, n).includes(0);
  } catch {
    return false;
  } finally {
    file?.close();
  }
}

/** lstat of `name` (bytes from git) in `dir`; undefined when missing or not spelled in UTF-8. */
function lstatName(dir: string, name: Uint8Array): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(`${dir}/${strictUtf8.decode(name)}`);
  } catch {
    return undefined;
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** How many synchronous lstat or folder reads run before the event loop gets a turn. */
const SLICE = 2048;

function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
