/**
 * Where a session's checkpoints are written and how git reaches them: the host's store under
 * Deft's state dir (./checkpoint_store.ts), or one inside the session's container. In a git
 * repository, the store's objects sit beside the repository's (read as an alternate, never
 * written). In a folder that is in no repository, the store holds a git folder of its own that
 * stands in for one (`<store>/attrs`, GIT_DIR with the folder as its work tree): every file is
 * read into the store, bounded by `MAX_STANDALONE_FILES` and the store's byte bound, and no
 * `.git` in or above the folder — one planted later included — is ever looked at.
 */
import { type RepoFacts, repositoryFacts } from "./patch.ts";
import { checkpointHostPlace } from "./checkpoint_tree.ts";
import { takeEarlyStore } from "./checkpoint_early.ts";
import type { GitPlace, GitSandbox } from "../policy/git.ts";
import type { Container } from "../container/container.ts";
import type { Trajectory } from "../trajectory/recorder.ts";
import {
  CheckpointError,
  checkpointStoreDir,
  MAX_STORE_BYTES,
  storeBytes,
  sweepCheckpointStores,
  writeStoreOwner,
} from "./checkpoint_store.ts";

/** Where checkpoints are written: a git place and the store folder there. */
export interface CheckpointPlace {
  place: GitPlace;
  store: string;
  /** What git told of the repository at the last checkpoint here (spares a git process). */
  facts?: RepoFacts;
  /** The store was made with this place and holds no checkpoint yet. */
  fresh?: boolean;
  /** The workspace is in no repository: the store holds every file of it (see the header). */
  standalone?: boolean;
  /** Settles (or throws CheckpointError) before anything is written into the store. */
  ready?: Promise<void>;
  /**
   * Refuses (CheckpointError) names about to be read into the store that would take it past
   * its bounds (a store of its own: every new file is written into it).
   */
  admit?: (paths: readonly Uint8Array[]) => Promise<void>;
  /**
   * At most how many bytes the store holds, as far as this process knows (a count, plus what
   * each checkpoint since could have added); undefined: unknown, to be counted.
   */
  bytes?: number;
  /**
   * At most how many bytes the store grows by when these names (bytes, from the workspace) are
   * read into it, trees included; undefined when one cannot be measured. Only where sizes are
   * cheap to read (the host).
   */
  measure?: (paths: readonly Uint8Array[]) => number | undefined;
  /**
   * What tells the store's index file apart from any other version of it (its inode, size and
   * time: git writes a new file and renames it into place); undefined when it cannot be read.
   * Only where it is cheap to read (the host).
   */
  indexStamp?: () => string | undefined;
  /** The tree this process last wrote the store's index as, and the index's stamp then. */
  written?: { tree: string; stamp: string };
}

/**
 * A checkpoint of a folder in no repository holds at most this many files: past it, the folder
 * (a home folder, a disk of downloads) is too large to copy at each turn, and the session says
 * so instead of taking one.
 */
export const MAX_STANDALONE_FILES = 50_000;

/** The file in a store that says it is a store of its own (the workspace was in no repository). */
const STANDALONE_MARK = "standalone";

/**
 * The host's checkpoint place for a session (the store made when missing, mode 0700).
 * `trajectory`: the session's trajectory file, written in a new store so that the sweep
 * (`sweepCheckpointStores`, run here for a new store) knows when the session is gone. A new
 * store for a workspace in no repository is a store of its own (see the header); an existing
 * store keeps the kind it was made as, whatever the workspace holds now.
 */
export async function hostCheckpointPlace(
  workspace: string,
  sessionId: string,
  sandbox?: GitSandbox,
  trajectory?: string,
): Promise<CheckpointPlace> {
  const store = checkpointStoreDir(sessionId);
  // A store the session made early (./checkpoint_early.ts) holds nothing yet: it is new.
  const early = takeEarlyStore(store);
  let isNew = early;
  try {
    Deno.lstatSync(store);
  } catch {
    isNew = true;
  }
  Deno.mkdirSync(`${store}/objects`, { recursive: true, mode: 0o700 });
  // The owner file and the sweep go on while git looks at the workspace (the sandbox starting);
  // a store made early was swept for then.
  const upkeep = isNew && trajectory
    ? writeStoreOwner(store, trajectory, workspace, early)
      .then(() => early ? [] : sweepCheckpointStores())
      .catch(() => [])
    : undefined;
  const common = `${store}/attrs`;
  const mark = `${store}/${STANDALONE_MARK}`;
  let standalone = !isNew && await Deno.lstat(mark).then((i) => i.isFile, () => false);
  let place = await checkpointHostPlace(
    workspace,
    store,
    sandbox,
    undefined,
    standalone ? common : undefined,
  );
  let facts: RepoFacts | undefined;
  if (isNew) {
    facts = await repositoryFacts(place);
    if (!facts) {
      standalone = true;
      await Deno.writeTextFile(mark, "", { createNew: true, mode: 0o600 });
      place = await checkpointHostPlace(workspace, store, sandbox, undefined, common);
      facts = {
        format: "sha1",
        objects: `${common}/objects`,
        infoFiles: [`${common}/info/exclude`, `${common}/info/attributes`],
      };
    }
  }
  const write = async () => {
    // A store of its own needs nothing of the folder (its git folder may be what is missing).
    if (standalone) return await writeHostCommonDir(common, facts?.format ?? "sha1", undefined);
    const found = facts ?? await repositoryFacts(place);
    if (!found) return `${workspace} is not in the git repository the store was made for`;
    await writeHostCommonDir(common, found.format, found.infoFiles[0]);
  };
  const { git, ready } = await exactBytes(place, store, isNew, write);
  await upkeep;
  return {
    place: git,
    store,
    fresh: isNew,
    measure: (paths) => growthAtMost(workspace, paths),
    indexStamp: () => fileStamp(`${store}/index`),
    ...(facts && { facts }),
    ...(ready && { ready }),
    ...(standalone && { standalone, admit: standaloneAdmit(workspace, store, git) }),
  };
}

/**
 * At most what reading `paths` (bytes, from `workspace`) into a store adds to it: each file's size
 * and a disk block (git compresses, and writes one loose object a file), a tree's worth for each,
 * and a margin for the trees above; undefined when a name is not UTF-8 (Deno cannot lstat it).
 */
function growthAtMost(workspace: string, paths: readonly Uint8Array[]): number | undefined {
  let bytes = 1024 * 1024;
  for (const path of paths) {
    let name: string;
    try {
      name = strictUtf8.decode(path);
    } catch {
      return undefined;
    }
    bytes += 64 * 1024;
    try {
      const info = Deno.lstatSync(`${workspace}/${name}`);
      if (info.isFile) bytes += info.size;
    } catch { /* gone: git writes nothing for it */ }
  }
  return bytes;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** `path`'s device, inode, size and change time (nanoseconds where told); undefined if missing. */
function fileStamp(path: string): string | undefined {
  try {
    const info = Deno.lstatSync(path);
    return `${info.dev}:${info.ino}:${info.size}:${info.ctime?.getTime()}:${info.mtime?.getTime()}`;
  } catch {
    return undefined;
  }
}

/**
 * Makes a common dir (see exactBytes) on the host with no git process: what `git init --bare
 * --template=` writes, not bare, with `info/attributes` turning conversions off and
 * `info/exclude` a link to the repository's (`exclude`), or an empty file in a store of its own.
 */
async function writeHostCommonDir(
  common: string,
  format: string,
  exclude: string | undefined,
): Promise<void> {
  await Deno.remove(common, { recursive: true }).catch(() => {});
  // A handful of small local writes: done synchronously (each awaited one costs a turn of the
  // event loop, a session's first checkpoint waits on them).
  for (const folder of ["objects", "refs/heads", "refs/tags", "info"]) {
    Deno.mkdirSync(`${common}/${folder}`, { recursive: true, mode: 0o700 });
  }
  Deno.writeTextFileSync(`${common}/HEAD`, "ref: refs/heads/main\n");
  Deno.writeTextFileSync(
    `${common}/config`,
    format === "sha1"
      ? "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
      : `[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = ${format}\n`,
  );
  Deno.writeTextFileSync(`${common}/info/attributes`, NO_CONVERSION);
  if (exclude === undefined) Deno.writeTextFileSync(`${common}/info/exclude`, "");
  else Deno.symlinkSync(exclude, `${common}/info/exclude`);
}

/**
 * The bound of a store of its own: the new files a checkpoint would read into it, counted and
 * measured (lstat, nothing opened) before any is. Past MAX_STANDALONE_FILES, or past what is left
 * of MAX_STORE_BYTES, the checkpoint is refused with what to do.
 */
function standaloneAdmit(
  workspace: string,
  store: string,
  place: GitPlace,
): (paths: readonly Uint8Array[]) => Promise<void> {
  const decoder = new TextDecoder();
  return async (paths) => {
    if (paths.length > MAX_STANDALONE_FILES) {
      throw new CheckpointError(
        `${workspace} is not in a git repository, so a checkpoint copies its files into Deft's ` +
          `own store, and ${paths.length} files changed or are new: more than the ` +
          `${MAX_STANDALONE_FILES} a checkpoint copies. Work in a smaller folder, make this one ` +
          "a repository (git init), or set `checkpoints: false` in the config.",
      );
    }
    let bytes = 0;
    for (const path of paths) {
      try {
        const info = Deno.lstatSync(`${workspace}/${decoder.decode(path)}`);
        if (info.isFile) bytes += info.size;
      } catch { /* gone meanwhile: git skips it too */ }
    }
    if (bytes < MAX_STORE_BYTES / 4) return;
    const left = MAX_STORE_BYTES - await storeBytes(place, store);
    if (bytes <= left) return;
    throw new CheckpointError(
      `${workspace} is not in a git repository, so a checkpoint copies its files into Deft's ` +
        `own store, and the ${paths.length} files changed or new hold ${mib(bytes)} MiB: more ` +
        `than the ${mib(Math.max(0, left))} MiB left of the store's ${
          mib(MAX_STORE_BYTES)
        } MiB. Work in a smaller folder, make this one a repository (git init), or set ` +
        "`checkpoints: false` in the config.",
    );
  };
}

function mib(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

/** A container's checkpoint place: a store inside it, kept for as long as the container. */
export async function containerCheckpointPlace(container: Container): Promise<CheckpointPlace> {
  const place = (await import("../container/patch.ts")).containerPlace(container);
  const store = await place.scratch("baseline");
  return { place: (await exactBytes(place, store, true)).git, store, fresh: true };
}

/** Attributes that turn off every conversion between the files and a checkpoint's bytes. */
const NO_CONVERSION = "* -text -eol -crlf -ident -filter -working-tree-encoding\n";

/**
 * `place` with the repository's attributes out of the way: a `.gitattributes` saying
 * `text eol=lf`, `ident` or a `working-tree-encoding` would otherwise change what a checkpoint
 * holds and what a rewind writes. Git 2.39 has no `--attr-source`, but
 * `$GIT_COMMON_DIR/info/attributes` outranks every in-tree file: each git call on the store's
 * index runs with a common dir of the store's own (`<store>/attrs`: made by `write` when given —
 * the host's, with no git process — else through git, which works inside a container too) whose
 * `info/attributes` unsets them all and whose `info/exclude` is a link to the repository's
 * (ignored files stay ignored). Calls that name `HEAD` read the repository's refs as before (they
 * write no file). The override is checked in force after it is written: for a fresh store made
 * by `write`, that check is `ready` (it runs while the work tree is listed; the caller awaits it
 * before writing), else it is done here. Either throws CheckpointError when it is not.
 */
async function exactBytes(
  place: GitPlace,
  store: string,
  fresh: boolean,
  write?: () => Promise<string | void>,
): Promise<{ git: GitPlace; ready?: Promise<void> }> {
  const common = `${store}/attrs`;
  // `--cached`: no attributes file of the work tree is opened (one may be a FIFO, not yet
  // looked for): only the store's own list and those in its index, which are blobs.
  const inForce = async () => {
    const r = await place.git(
      ["check-attr", "--cached", "text", "ident", "working-tree-encoding", "--", "deft-probe"],
      { GIT_COMMON_DIR: common, GIT_INDEX_FILE: `${store}/index` },
    );
    return r.ok && r.out.split("\n").filter((l) => l.endsWith(": unset")).length === 3;
  };
  const refused = (why: string) =>
    new CheckpointError(
      `could not keep checkpoints byte-exact in ${place.where} (${
        why || "the attributes override is not in force"
      }): none are taken, so that no rewind writes converted line endings.`,
    );
  const own = (args: readonly string[], env?: Record<string, string>) =>
    env?.GIT_INDEX_FILE !== undefined && !args.includes("HEAD");
  const git: GitPlace = {
    ...place,
    git: (args, env, stdin) =>
      place.git(args, own(args, env) ? { ...env, GIT_COMMON_DIR: common } : env, stdin),
  };
  if (write && fresh) {
    const failed = await write();
    if (failed) throw refused(failed);
    const ready = inForce().then((ok) => {
      if (!ok) throw refused("");
    });
    // Handled now (nothing may await it before it fails); whoever awaits it gets the error.
    ready.catch(() => {});
    return { git, ready };
  }
  if (write && !await inForce()) {
    const failed = await write();
    if (failed || !await inForce()) throw refused(failed ?? "");
  } else if (!write && (fresh || !await inForce())) {
    const last = await writeCommonDir(place, store, common);
    if (!last.ok || !await inForce()) throw refused(last.err.trim());
  }
  return { git };
}

/** Makes `common` (see exactBytes) with git alone; the last git step's result. */
async function writeCommonDir(place: GitPlace, store: string, common: string) {
  const found = await place.git(
    ["rev-parse", "--show-object-format", "--path-format=absolute", "--git-path", "info/exclude"],
  );
  if (!found.ok) return found;
  const [format, exclude] = found.out.split("\n");
  // GIT_DIR names the folder to make, one of Deft's: the workspace's config is not read.
  const made = await place.git(
    ["init", "-q", "--bare", "--template=", `--object-format=${format}`],
    { GIT_DIR: common },
  );
  if (!made.ok) return made;
  // Not bare: it stands in for the repository's common dir while git works on the files.
  const config = await place.git(["config", "core.bare", "false"], { GIT_DIR: common });
  if (!config.ok) return config;
  const env = {
    GIT_DIR: common,
    GIT_WORK_TREE: common,
    GIT_INDEX_FILE: `${common}/write.index`,
    GIT_OBJECT_DIRECTORY: `${store}/objects`,
  };
  const blob = (text: string) =>
    place.git(["hash-object", "-w", "--stdin"], env, new TextEncoder().encode(text));
  const attributes = await blob(NO_CONVERSION);
  const link = await blob(exclude);
  if (!attributes.ok) return attributes;
  if (!link.ok) return link;
  const listed = await place.git(
    ["update-index", "--add", "--index-info"],
    env,
    new TextEncoder().encode(
      `100644 ${attributes.out.trim()}\tinfo/attributes\n` +
        `120000 ${link.out.trim()}\tinfo/exclude\n`,
    ),
  );
  if (!listed.ok) return listed;
  // The user's own attributes file could convert this one too.
  return await place.git(
    ["-c", "core.attributesFile=/dev/null", "checkout-index", "-f", "-a"],
    env,
  );
}

/**
 * The checkpoint place of a session recorded in `container`, for rewinding it there: the store
 * its checkpoints name (inside the container, made by `containerCheckpointPlace`). Throws
 * CheckpointError when the records name none, or a path that is not such a store.
 */
export async function recordedContainerPlace(
  container: Container,
  data: Trajectory,
): Promise<CheckpointPlace> {
  const store = data.checkpoints?.at(-1)?.store ?? "";
  if (!/^\/tmp\/deft\/baseline\.[A-Za-z0-9]+$/.test(store)) {
    throw new CheckpointError(
      `the session's checkpoints name no store Deft makes in a container ('${store}'): ` +
        "its files cannot be rewound; rewind only the conversation.",
    );
  }
  const place = (await import("../container/patch.ts")).containerPlace(container);
  const there = await place.git(["-c", "core.bare=false", "rev-parse", "--git-dir"], {
    GIT_DIR: `${store}/attrs`,
  });
  if (!there.ok) {
    throw new CheckpointError(
      `the checkpoint store ${store} is not in ${place.where} (${there.err.trim()}): it was ` +
        "removed with the session's container, or this is another one. Rewind only the " +
        "conversation, or attach to the container the session ran in (--docker-container-id).",
    );
  }
  return { place: (await exactBytes(place, store, false)).git, store };
}
