/**
 * Every git command Deft runs goes through here. A workspace is controlled by whoever wrote it (a
 * cloned repository, or the model through its shell), and git obeys the repository's own
 * `.git/config` and `.gitattributes`: `core.fsmonitor`, hooks, filter drivers, diff drivers,
 * textconv and pagers all start programs. This module turns each of those off for the one command
 * by passing overrides through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which
 * git ranks above every config file, so a hostile repository can configure nothing that runs.
 */
import {
  childEnvironment,
  type ContainerCli,
  containerExecLaunch,
  type Launch,
  runChildSync,
  spawnChild,
} from "./process.ts";
import { dirname } from "node:path";
import {
  bwrapNotFound,
  sandboxCommand,
  type SandboxMode,
  SandboxUnavailableError,
} from "./sandbox.ts";

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
  ["credential.helper", ""],
  ["diff.external", ""],
  ["gpg.program", "false"],
  ["protocol.allow", "never"],
  ["color.ui", "false"],
];

// Driver keys (`filter.<name>.clean` …) name programs; their names are the repository's choice,
// so they are found by listing the configuration and each one is blanked.
const DRIVER_KEY = /^(filter|diff|merge)\.(.+)\.(clean|smudge|process|textconv|command|driver)$/i;

/**
 * `git diff` of the index as a patch: binary-safe, no colour, paths as they are, and no external
 * diff or textconv program (the repository's attributes name those).
 */
export const INDEX_PATCH_ARGS: readonly string[] = [
  "-c",
  "core.quotepath=false",
  "diff",
  "--cached",
  "--binary",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
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

/** A git command ready to start: program, arguments and the whole environment. */
export type GitInvocation = Launch;

/** What one git command produced. */
export interface GitResult {
  ok: boolean;
  code: number;
  out: string;
  err: string;
}

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
 * The driver keys (`filter.*.clean`, `diff.*.textconv`, `merge.*.driver` …) the repository's
 * configuration defines, each paired with an empty value that disables it.
 */
export async function repositoryDrivers(
  cwd: string,
  sandbox?: GitSandbox,
): Promise<[string, string][]> {
  const listed = await spawn(cwd, gitInvocation(["config", "--list", "-z"]), undefined, sandbox);
  return listed.ok ? driverOverrides(listed.out) : [];
}

/** The overrides that blank each driver key in `git config --list -z` output `listing`. */
function driverOverrides(listing: string): [string, string][] {
  const overrides: [string, string][] = [];
  for (const entry of listing.split("\0")) {
    const key = entry.split("\n", 1)[0];
    const match = DRIVER_KEY.exec(key);
    if (!match) continue;
    overrides.push([key, ""]);
    if (match[1].toLowerCase() === "filter") {
      overrides.push([`filter.${match[2]}.required`, "false"]);
    }
  }
  return overrides;
}

/** Feeds `stdin` (if any) to `child`, then collects what it printed and how it ended. */
async function finish(child: Deno.ChildProcess, stdin?: Uint8Array): Promise<GitResult> {
  if (stdin) {
    const writer = child.stdin.getWriter();
    await writer.write(stdin).catch(() => {});
    await writer.close().catch(() => {});
  }
  const result = await child.output();
  const decoder = new TextDecoder();
  return {
    ok: result.success,
    code: result.code,
    out: decoder.decode(result.stdout),
    err: decoder.decode(result.stderr),
  };
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
  const drivers = await repositoryDrivers(cwd, options.sandbox);
  const invocation = gitInvocation(args, options.env, drivers, options.fetch);
  return spawn(cwd, invocation, options.stdin, options.sandbox, options.signal);
}

async function spawn(
  cwd: string,
  invocation: GitInvocation,
  stdin?: Uint8Array,
  sandbox?: GitSandbox,
  signal?: AbortSignal,
): Promise<GitResult> {
  const sandboxed = sandbox !== undefined && sandbox.mode !== "none";
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
  const result = await finish(child, stdin);
  // bwrap reports its own failures (no user namespaces, a bind that cannot be made) this way;
  // git never does. Say so rather than pass it off as git's answer.
  if (sandboxed && !result.ok && result.err.startsWith("bwrap: ")) {
    throw new SandboxUnavailableError(`The sandbox could not start git: ${result.err.trim()}`);
  }
  return result;
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

/** The variables `gitInvocation` sets itself; only these (and the caller's) go into a container. */
const HARDENING_VARIABLES = new Set([
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_NOSYSTEM",
  "GIT_TERMINAL_PROMPT",
  "GIT_OPTIONAL_LOCKS",
  "GIT_PAGER",
  "GIT_EDITOR",
]);

/**
 * `runGit` inside a container (process.ts `containerExecLaunch`): the same hardening — the fixed
 * settings and every driver the repository defines blanked — passed as the git variables only
 * (nothing else of Deft's environment goes in). `stdin` is fed to git.
 */
export async function runGitInContainer(
  cli: ContainerCli,
  id: string,
  cwd: string,
  args: readonly string[],
  env: Record<string, string> = {},
  stdin?: Uint8Array,
): Promise<GitResult> {
  const inside = async (invocation: GitInvocation, input?: Uint8Array): Promise<GitResult> => {
    const gitEnv = Object.fromEntries(
      Object.entries(invocation.env).filter(([k]) =>
        k in env || HARDENING_VARIABLES.has(k) || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(k)
      ),
    );
    const child = spawnChild(
      containerExecLaunch(cli, id, {
        argv: [invocation.program, ...invocation.args],
        env: gitEnv,
        workdir: cwd,
        interactive: input !== undefined,
      }),
      { stdin: input ? "piped" : "null" },
    );
    return await finish(child, input);
  };
  const listed = await inside(gitInvocation(["config", "--list", "-z"]));
  const drivers = listed.ok ? driverOverrides(listed.out) : [];
  return inside(gitInvocation(args, env, drivers), stdin);
}
