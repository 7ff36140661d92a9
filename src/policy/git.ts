/**
 * Every git command Deft runs goes through here. A workspace is controlled by whoever wrote it (a
 * cloned repository, or the model through its shell), and git obeys the repository's own
 * `.git/config` and `.gitattributes`: `core.fsmonitor`, hooks, filter drivers, diff drivers,
 * textconv and pagers all start programs. This module turns each of those off for the one command
 * by passing overrides through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which
 * git ranks above every config file, so a hostile repository can configure nothing that runs.
 */
import { childEnvironment, type Launch, runChildSync, spawnChild } from "./process.ts";
import {
  describe,
  ERROR_OUTPUT_LIMIT,
  finish,
  GIT_OUTPUT_LIMIT,
  gitDeadlineMs,
  GitLimitError,
  type GitLimits,
  type GitResult,
  limitError,
} from "./git_limits.ts";
import { dirname } from "node:path";
import { runInRunner, RunnerLostError, runnerScratch, type RunnerView } from "./git_runner.ts";
import {
  bwrapNotFound,
  sandboxCommand,
  type SandboxMode,
  SandboxUnavailableError,
} from "./sandbox.ts";

// The limits every git command runs within, and git inside a container, live beside this file;
// their names stay importable from here.
export {
  GIT_DEADLINE_MS,
  GIT_OUTPUT_LIMIT,
  gitDeadlineMs,
  GitLimitError,
  type GitLimits,
  type GitResult,
  runLimited,
} from "./git_limits.ts";

/** Settings that stop git from starting programs on a repository's say-so. */
export const HARDENED_GIT_CONFIG: readonly (readonly [string, string])[] = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
  ["core.editor", "true"],
  ["sequence.editor", "true"],
  ["core.sshCommand", "false"],
  ["core.gitProxy", ""],
  ["core.askPass", ""],
  ["core.alternateRefsCommand", ""],
  ["core.untrackedCache", "false"],
  // A split index writes `sharedindex.*` beside the repository's own index, even for a private one.
  ["core.splitIndex", "false"],
  ["credential.helper", ""],
  ["diff.external", ""],
  ["gpg.program", "false"],
  ["protocol.allow", "never"],
  ["color.ui", "false"],
];

// Files git reads whose names the configuration gives: a repository could name a FIFO (git would
// wait on it forever) or a device. A value the repository sets gives way to the user's own.
const READ_FILE_KEYS = ["core.excludesfile", "core.attributesfile"] as const;

// Driver keys (`filter.<name>.clean` …) name programs; their names are the repository's choice,
// so they are found by listing the configuration and each one is blanked.
const DRIVER_KEY = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver)$/i;

/**
 * `git diff` of the index as a patch: binary-safe, no colour, paths as they are, and no external
 * diff or textconv program (the repository's attributes name those). The paths are always the
 * whole tree's behind `a/` and `b/`, as `git apply` reads them: a repository's `diff.relative`,
 * `diff.noprefix`, `diff.mnemonicPrefix` (or `diff.srcPrefix`) would make them name other files.
 */
export const INDEX_PATCH_ARGS: readonly string[] = [
  "-c",
  "core.quotepath=false",
  "-c",
  "diff.relative=false",
  "diff",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "--cached",
  "--binary",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
];

/**
 * `git apply`'s list of the files of the patch on its standard input (`--numstat --summary`),
 * with names as they are: git quotes only a name with a control character (a newline, a tab), a
 * quote or a backslash, never one for its UTF-8 letters (`core.quotepath=false`).
 */
export const PATCH_FILES_ARGS: readonly string[] = [
  "-c",
  "core.quotepath=false",
  "apply",
  "--numstat",
  "--summary",
  "-",
];

/**
 * The environment that points git at a private index and object store: `index` and `objects`
 * are Deft's own (a temp folder), `alternates` the object stores git may read from besides (the
 * repository's, an earlier private store). Objects git writes go only into `objects`, the staging
 * area only into `index`: the repository's own index, objects and refs are never written. The one
 * place these variables are made; `gitInvocation` passes them through like any `env` entry.
 */
export function privateStoreEnv(
  index: string,
  objects: string,
  alternates: readonly string[],
): Record<string, string> {
  return {
    GIT_INDEX_FILE: index,
    GIT_OBJECT_DIRECTORY: objects,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates.map(alternatePath).join(":"),
  };
}

/**
 * `path` as one entry of `GIT_ALTERNATE_OBJECT_DIRECTORIES`, a colon-separated list: a path with
 * a colon (or starting with a quote) is written C-quoted, which git reads back as one entry.
 */
function alternatePath(path: string): string {
  if (!/[:"\\]/.test(path)) return path;
  return `"${path.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * Where a patch is computed: git in the workspace and the few file steps around it, on the host
 * (in the sandbox when there is one) or inside a container. The patch algorithm
 * (src/agent/patch.ts) runs over this, so every filter applies in both places. Every step has a
 * deadline and bounded output (`GitLimits`), and none opens a file that is not a regular one.
 */
export interface GitPlace {
  /** Where, in a few words, for messages ("the container abc123"). */
  where: string;
  /** Runs hardened git in the workspace (`runGit`, `runGitInContainer`). */
  git(
    args: readonly string[],
    env?: Record<string, string>,
    stdin?: Uint8Array,
  ): Promise<GitResult>;
  /** A new private folder there with an empty `objects/`, writable to later git calls. */
  scratch(kind: "baseline" | "patch"): Promise<string>;
  /** Removes a folder `scratch` made (quietly). */
  remove(folder: string): Promise<void>;
  /** Copies an index file, keeping its times (git tells a file changed in the same second by it). */
  copyIndex(from: string, to: string): Promise<void>;
  /**
   * For each path (bytes, from the workspace): true when it is a regular file above `anyOver`
   * bytes, or above `binaryOver` bytes with a NUL in its first 8000. Only regular files are read.
   */
  largeFiles(
    paths: readonly Uint8Array[],
    sizes: { binaryOver: number; anyOver: number },
  ): Promise<boolean[]>;
  /**
   * For each path (bytes, from the workspace): true when it is a regular file (not a symlink)
   * above `bytes`. Opens no file: sizes only.
   */
  filesOver(paths: readonly Uint8Array[], bytes: number): Promise<boolean[]>;
  /**
   * The files git would open as ignore or attribute lists that are not regular files (a FIFO git
   * would wait on forever, a device): `.gitignore` and `.gitattributes` in the workspace, and
   * `extra` (git's own `info/exclude`, `info/attributes`). Paths as found, for a message.
   */
  specialFiles(extra: readonly string[]): Promise<string[]>;
}

/** A git command ready to start: program, arguments and the whole environment. */
export type GitInvocation = Launch;

/**
 * The sandbox to run git in: bubblewrap as for the shell (see policy/sandbox.ts), the workspace the
 * only writable place besides `writablePaths`. Mode `none` runs git as it is. Only for git started
 * from Deft's main process: a caller already inside bwrap (the tool host) must not nest another.
 */
export interface GitSandbox {
  mode: SandboxMode;
  /** Absolute, symlink-free workspace root. */
  workspace: string;
  /** Folders outside the workspace git must read though the sandbox hides them (a `.git`). */
  readOnlyPaths?: readonly string[];
  /** Deft's own scratch folders git must write (a temp index and object store). */
  writablePaths?: readonly string[];
  /** The bwrap executable (default `bwrap` on PATH). */
  bwrapPath?: string;
}

/** The git sandbox for `workspace` under the tool settings' `sandbox` and `bwrapPath`. */
export function gitSandbox(
  workspace: string,
  settings: { sandbox?: SandboxMode; bwrapPath?: string },
): GitSandbox {
  return { mode: settings.sandbox ?? "none", workspace, bwrapPath: settings.bwrapPath };
}

/** Options for `runGit`. */
export interface GitOptions {
  /** Extra environment (e.g. `GIT_INDEX_FILE`). `GIT_CONFIG_*` keys here are ignored. */
  env?: Record<string, string>;
  /** Bytes to feed to git's standard input (default: none). */
  stdin?: Uint8Array;
  /**
   * Run git (and the config listing before it) inside this sandbox. Off by default: the caller
   * says so explicitly. Throws `SandboxUnavailableError` when bwrap is missing or cannot start.
   */
  sandbox?: GitSandbox;
  /**
   * The command reaches another repository (`git clone` for a batch task): the transports a user
   * names (local paths, file, http(s), ssh, git) and their credential helpers are allowed; `ext::`,
   * which runs any command, never is.
   */
  fetch?: boolean;
  /** Stops git when aborted. */
  signal?: AbortSignal;
  /** The deadline and output limit (defaults: `gitDeadlineMs()`, none for `fetch`; GIT_OUTPUT_LIMIT). */
  limits?: GitLimits;
  /**
   * Folders only Deft writes (its scratch folders and checkpoint stores). A command whose
   * `GIT_COMMON_DIR` (else `GIT_DIR`) is one of them, or inside one, reads that folder's config
   * and never the repository's: it has no repository drivers, so none are listed (a second git
   * process, and a listing a racing process could make stale anyway).
   */
  ownFolders?: readonly string[];
}

/** The settings a fetching command keeps from the user (see `GitOptions.fetch`). */
const FETCH_KEYS = new Set(["protocol.allow", "core.sshCommand", "credential.helper"]);
const FETCH_CONFIG: readonly (readonly [string, string])[] = [["protocol.ext.allow", "never"]];

/**
 * The hardened invocation of `git args` in `cwd`. `overrides` adds config keys (found with
 * `repositoryDrivers`) to blank as well. The environment is policy/process.ts's `git` kind (no
 * secrets, no inherited git overrides), plus `GIT_CONFIG_NOSYSTEM`, no prompts and no optional
 * locks.
 */
export function gitInvocation(
  args: readonly string[],
  extraEnv: Record<string, string> = {},
  overrides: readonly (readonly [string, string])[] = [],
  fetch = false,
): GitInvocation {
  const env = childEnvironment("git");
  for (const [key, value] of Object.entries(extraEnv)) {
    if (!key.startsWith("GIT_CONFIG")) env[key] = value;
  }
  const hardened = fetch
    ? [...HARDENED_GIT_CONFIG.filter(([key]) => !FETCH_KEYS.has(key)), ...FETCH_CONFIG]
    : HARDENED_GIT_CONFIG;
  const settings = [...hardened, ...overrides];
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  Object.assign(env, {
    GIT_CONFIG_COUNT: String(settings.length),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_PAGER: "cat",
    GIT_EDITOR: "true",
  });
  return { program: "git", args: ["--no-pager", ...args], env };
}

/**
 * The overrides the repository's configuration calls for: each driver key it defines
 * (`filter.*.clean`, `diff.*.textconv`, `merge.*.driver` …) blanked, and an excludes or attributes
 * file it names replaced by the user's own (or none).
 */
export async function repositoryDrivers(
  cwd: string,
  sandbox?: GitSandbox,
  limits?: GitLimits,
): Promise<[string, string][]> {
  const list = (args: string[]) =>
    spawn(
      cwd,
      gitInvocation(["config", "--list", "-z", ...args]),
      undefined,
      sandbox,
      undefined,
      limits,
    );
  const scoped = await list(["--show-scope"]);
  if (scoped.ok) return repositoryOverrides(scoped.out, { scoped: true, untrusted: false });
  // A git older than 2.26 knows no scopes: every setting counts as the repository's.
  const plain = await list([]);
  return plain.ok ? repositoryOverrides(plain.out, { scoped: false, untrusted: true }) : [];
}

/**
 * The overrides for `git config --list -z` output `listing` (with `--show-scope` when `scoped`).
 * With `untrusted`, every scope is the repository's (inside a container the model writes the
 * global config too).
 */
export function repositoryOverrides(
  listing: string,
  { scoped, untrusted }: { scoped: boolean; untrusted: boolean },
): [string, string][] {
  const overrides: [string, string][] = [];
  const files = new Map<string, { user?: string; repository: boolean }>();
  const entries = listing.split("\0");
  const step = scoped ? 2 : 1;
  for (let i = 0; i + step - 1 < entries.length; i += step) {
    const scope = scoped ? entries[i] : "local";
    const entry = entries[i + step - 1];
    if (entry === "") continue;
    const [key, ...rest] = entry.split("\n");
    const lower = key.toLowerCase();
    if ((READ_FILE_KEYS as readonly string[]).includes(lower)) {
      const seen = files.get(lower) ?? { repository: false };
      if (!untrusted && (scope === "global" || scope === "system")) seen.user = rest.join("\n");
      else if (scope !== "command") seen.repository = true;
      files.set(lower, seen);
      continue;
    }
    const match = DRIVER_KEY.exec(key);
    if (!match) continue;
    overrides.push([key, ""]);
    if (match[1].toLowerCase() === "filter") {
      overrides.push([`filter.${match[2]}.required`, "false"]);
    }
  }
  for (const key of READ_FILE_KEYS) {
    const seen = files.get(key);
    if (untrusted || seen?.repository) overrides.push([key, seen?.user ?? "/dev/null"]);
  }
  return overrides;
}

/**
 * Runs `git args` in `cwd` with every repository-controlled program turned off: the fixed
 * settings above plus each filter, diff and merge driver the repository defines; inside
 * `options.sandbox` when given. Never throws for a failing git; throws only when git cannot be
 * started at all, or the sandbox asked for cannot be provided (`SandboxUnavailableError`).
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const limits = { ...options.limits, noDeadline: options.fetch };
  const drivers = readsNoDriver(args) || readsOwnConfig(options)
    ? []
    : await repositoryDrivers(cwd, options.sandbox, limits);
  const invocation = gitInvocation(args, options.env, drivers, options.fetch);
  return spawn(cwd, invocation, options.stdin, options.sandbox, options.signal, limits);
}

/**
 * True for the plumbing commands Deft runs that read no file of the work tree and no ignore or
 * attributes list whatever the configuration says, so the listing of the repository's drivers
 * (`repositoryDrivers`, a second git process) would change nothing: `rev-parse` (paths, refs) and
 * `count-objects`. The fixed settings (`HARDENED_GIT_CONFIG`) still apply to them. Anything that
 * touches the index is listed first: even `read-tree` hashes a file through its clean filter
 * when the index entry is racy.
 */
export function readsNoDriver(args: readonly string[]): boolean {
  let i = 0;
  while (i < args.length && args[i].startsWith("-")) i += args[i] === "-c" ? 2 : 1;
  return args[i] === "rev-parse" || args[i] === "count-objects";
}

/**
 * True when the command's repository config is in one of `options.ownFolders`: its
 * `GIT_COMMON_DIR`, else its `GIT_DIR`, names one of them or a folder inside one. git reads the
 * config of the common dir (`$GIT_COMMON_DIR/config`) and no other repository's.
 */
function readsOwnConfig(options: GitOptions): boolean {
  const dir = options.env?.GIT_COMMON_DIR ?? options.env?.GIT_DIR;
  if (dir === undefined || !dir.startsWith("/") || dir.split("/").includes("..")) return false;
  return (options.ownFolders ?? []).some((own) =>
    own.startsWith("/") && (dir === own || dir.startsWith(own.endsWith("/") ? own : `${own}/`))
  );
}

async function spawn(
  cwd: string,
  invocation: GitInvocation,
  stdin?: Uint8Array,
  sandbox?: GitSandbox,
  signal?: AbortSignal,
  limits: GitLimits & { noDeadline?: boolean } = {},
): Promise<GitResult> {
  const sandboxed = sandbox !== undefined && sandbox.mode !== "none";
  // A command that ends by itself goes to the view's long-lived sandbox (./git_runner.ts): the
  // same view and limits, without a bwrap of its own. A fetch (no deadline) or one a caller may
  // abort is started on its own, as below.
  if (sandbox && sandbox.mode !== "none" && !signal && !limits.noDeadline) {
    return await viaRunner(cwd, invocation, stdin, { ...sandbox, mode: sandbox.mode }, limits);
  }
  // `none` is left alone: sandboxCommand would add a PID namespace, which a git call that ends
  // by itself does not need (and which cannot nest inside a tool host already in bwrap).
  const { program, args } = sandboxed
    ? sandboxCommand([invocation.program, ...invocation.args], {
      mode: sandbox.mode,
      workspace: sandbox.workspace,
      cwd,
      readOnlyPaths: sandbox.readOnlyPaths,
      writablePaths: sandbox.writablePaths,
      bwrapPath: sandbox.bwrapPath,
    })
    : invocation;
  // In the sandbox the workspace is a mount of its own: a repository above it (the workspace is
  // one of its folders) is found only if git may look past that mount.
  const env = sandboxed
    ? { ...invocation.env, GIT_DISCOVERY_ACROSS_FILESYSTEM: "1" }
    : invocation.env;
  let child: Deno.ChildProcess;
  try {
    child = spawnChild({ program, args, env, cwd }, { stdin: stdin ? "piped" : "null", signal });
  } catch (e) {
    // Not found: bwrap, or the folder to start in.
    const there = await Deno.stat(cwd).then((s) => s.isDirectory, () => false);
    if (sandboxed && e instanceof Deno.errors.NotFound && there) throw bwrapNotFound(program);
    throw e;
  }
  const result = await finish(child, describe(invocation.args), stdin, limits);
  // bwrap reports its own failures (no user namespaces, a bind that cannot be made) this way;
  // git never does. Say so rather than pass it off as git's answer.
  if (sandboxed && !result.ok && result.err.startsWith("bwrap: ")) {
    throw new SandboxUnavailableError(`The sandbox could not start git: ${result.err.trim()}`);
  }
  return result;
}

/** `spawn` through the sandbox view's runner: the same outcome, errors and messages. */
async function viaRunner(
  cwd: string,
  invocation: GitInvocation,
  stdin: Uint8Array | undefined,
  sandbox: GitSandbox & { mode: Exclude<SandboxMode, "none"> },
  limits: GitLimits,
): Promise<GitResult> {
  const timeoutMs = limits.timeoutMs ?? gitDeadlineMs();
  const maxOut = limits.maxOutputBytes ?? GIT_OUTPUT_LIMIT;
  const what = describe(invocation.args);
  let answer;
  try {
    answer = await runInRunner(
      runnerView(sandbox),
      sandbox.writablePaths ?? [],
      {
        cwd,
        env: { ...invocation.env, GIT_DISCOVERY_ACROSS_FILESYSTEM: "1" },
        argv: [invocation.program, ...invocation.args],
        stdin,
        timeoutMs,
        maxOut,
        maxErr: ERROR_OUTPUT_LIMIT,
      },
    );
  } catch (e) {
    if (e instanceof RunnerLostError) {
      throw new GitLimitError(
        `${what}: ${e.message}, so its outcome is unknown. The next git command starts a new ` +
          "sandbox; if this repeats, run with --sandbox none to see git's own error.",
      );
    }
    throw e;
  }
  const stopped = answer.over === "deadline"
    ? `did not finish within ${Math.round(timeoutMs / 100) / 10} s`
    : answer.over
    ? `printed more than ${
      Math.round((answer.over === "stdout" ? maxOut : ERROR_OUTPUT_LIMIT) / 1024 / 1024 * 10) / 10
    } MiB on ${answer.over}`
    : undefined;
  if (stopped) throw limitError(what, stopped);
  const decoder = new TextDecoder();
  const err = decoder.decode(answer.err);
  // `env -C` could not enter the folder: as when a child cannot start there.
  if (answer.code === 125 && !await isFolder(cwd)) {
    throw new Deno.errors.NotFound(`${what}: the folder ${cwd} is not there`);
  }
  const result = {
    ok: answer.code === 0,
    code: answer.code ?? -1,
    out: decoder.decode(answer.out),
    err,
    bytes: answer.out,
  };
  if (!result.ok && err.startsWith("bwrap: ")) {
    throw new SandboxUnavailableError(`The sandbox could not start git: ${err.trim()}`);
  }
  return result;
}

/** The runner view of a git sandbox. */
function runnerView(sandbox: GitSandbox & { mode: Exclude<SandboxMode, "none"> }): RunnerView {
  return {
    mode: sandbox.mode,
    workspace: sandbox.workspace,
    readOnlyPaths: sandbox.readOnlyPaths ?? [],
    bwrapPath: sandbox.bwrapPath,
  };
}

/**
 * A new private folder (with an empty `objects/`) that every git command in `sandbox` may write:
 * made in the sandbox view's own folder, so no command needs a sandbox of its own for it.
 * Outside a sandbox (mode `none`), a temp folder of its own.
 */
export async function gitScratch(sandbox: GitSandbox | undefined, kind: string): Promise<string> {
  if (sandbox && sandbox.mode !== "none") {
    return await runnerScratch(runnerView({ ...sandbox, mode: sandbox.mode }), `deft-${kind}`);
  }
  const folder = await Deno.realPath(await Deno.makeTempDir({ prefix: `deft-${kind}-` }));
  await Deno.mkdir(`${folder}/objects`);
  return folder;
}

async function isFolder(path: string): Promise<boolean> {
  return await Deno.stat(path).then((s) => s.isDirectory, () => false);
}

/**
 * The unified diff (`-U<context>`, no colour, git's header included) from the file `before` to
 * the file `after`, by `git diff --no-index`: hardened, and looking for no repository above the
 * folder that holds them. "" when they are the same or git cannot run. Synchronous, for the
 * console that shows an edit as soon as it is made.
 */
export function diffFilesSync(before: string, after: string, context = 2): string {
  const dir = dirname(before);
  const { program, args, env } = gitInvocation(
    [
      "-c",
      "core.quotepath=false",
      "diff",
      "--no-index",
      "--no-ext-diff",
      "--color=never",
      `-U${context}`,
      "--",
      before,
      after,
    ],
    { GIT_CEILING_DIRECTORIES: dirname(dir) },
  );
  try {
    const out = runChildSync({ program, args, env, cwd: dir }, { stderr: "null" });
    return new TextDecoder().decode(out.stdout);
  } catch {
    return "";
  }
}

/**
 * The names in git's `-z` output (NUL-separated, as `ls-files -z` or `diff --name-only -z` print
 * them), as byte strings: a name is never decoded or split on anything but NUL.
 */
export function splitNul(bytes: Uint8Array): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0) continue;
    if (i > start) parts.push(bytes.subarray(start, i));
    start = i + 1;
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts;
}
