/**
 * The trust boundary: what each child process Deft starts may do, decided in one place.
 *
 * A `ProcessPolicy` is resolved once per session from the settings (sandbox mode, network, the
 * shell's environment policy) and the workspace. Every child gets its program, arguments and
 * whole environment from one of the views below, and is started by `spawnChild`/`runChild`, which
 * always clear the inherited environment, so nothing reaches a child by accident:
 *
 * | child                          | view                | confinement              | environment            |
 * |--------------------------------|---------------------|--------------------------|------------------------|
 * | tool worker (Deno worker)      | `boundary.ts`       | Deno permissions         | (shares Deft's)        |
 * | sandboxed tool host            | `toolHostLaunch`    | bwrap, policy's mode     | core + Deno's own      |
 * | the model's shell              | `shellLaunch`       | bwrap, or a PID namespace| `shell_environment`    |
 * | a command run unasked          | `unaskedPolicy`     | bwrap, read-only, no net | core only              |
 * | git                            | `git.ts` `runGit`   | bwrap when sandboxed     | secrets dropped, hardened |
 * | an MCP server                  | `mcpServerLaunch`   | the shell's sandbox; `sandbox: none`: none | basic + its own `env` (+ proxy) |
 * | a batch task (Deft itself)     | `deftTaskLaunch`    | its own session, dies with Deft | Deft's own      |
 * | a batch task's test            | `taskTestLaunch`    | the task's sandbox       | `shell_environment`    |
 * | Deft's helper scripts, Slurm   | `helperLaunch`      | none                     | none / Deft's own      |
 * | a container runtime's client   | `container_cli.ts`  | the container's own      | the daemon's variables |
 * | a configured hook              | `hooks.ts` `hookLaunch` | the shell's sandbox and network; `sandbox: none`: its own process group | core + `DEFT_PROJECT_DIR` + its `env` (+ proxy; + hardened git outside) |
 *
 * The modules beside this one do the detailed work: sandbox.ts builds bwrap argv, git.ts the git
 * hardening, shell_env.ts filters variables. Nothing outside src/policy builds an argv for bwrap,
 * an environment for a child, or calls `Deno.Command` but spawn.ts (tests/policy/process_test.ts
 * checks).
 */
import { envObject } from "../env.ts";
import {
  dieWithDeftPrefix,
  sandboxCommand,
  type SandboxMode,
  shownByWorkspace,
} from "./sandbox.ts";
import { findExecutable } from "./executables.ts";
import { isInside } from "./workspace.ts";
import { CORE_VARIABLES, shellEnvironment, type ShellEnvironmentPolicy } from "./shell_env.ts";

import type { Launch } from "./spawn.ts";
import {
  behindForwarder,
  forwarderFiles,
  proxyEnvironment,
  socksSocketOf,
} from "./network/launch.ts";
import type { NetworkList } from "./network/rules.ts";

// The one command builder lives in spawn.ts (below sandbox.ts, whose probes use it too).
export { type ChildIo, type Launch, runChild, runChildSync, spawnChild } from "./spawn.ts";

/** The settings a policy is resolved from (a subset of the tool settings). */
export interface PolicySettings {
  sandbox?: SandboxMode;
  allowNetwork?: boolean;
  /** The network proxy's Unix socket (policy/network), when a network list is in force. */
  networkProxy?: string;
  /** A forwarder to the proxy already listens in the shell's network namespace (a container's). */
  networkForwarded?: boolean;
  shellEnvironment?: ShellEnvironmentPolicy;
  bwrapPath?: string;
  unsharePath?: string;
  /**
   * The network list itself (config/network.ts), for a launch that must start this process's
   * proxy for it first (policy/hooks.ts `hookPolicyUnderList`); the policy keeps only the socket.
   */
  network?: NetworkList;
}

/** What the children of one session may do. */
export interface ProcessPolicy {
  /** Absolute, symlink-free workspace root: the only place the model's processes may write. */
  readonly workspace: string;
  readonly sandbox: SandboxMode;
  /** The host network (else only a private loopback inside the sandbox). */
  readonly network: boolean;
  /**
   * The network proxy's Unix socket on the host: the sandbox (its own network namespace) reaches
   * the hosts the list allows through it and nothing else. Unused with `network` or `none`.
   */
  readonly networkProxy?: string;
  /**
   * The shell's network namespace already has a forwarder to the proxy on the loopback (a
   * container started under the list, src/container/network.ts): only the variables are needed.
   */
  readonly networkForwarded?: boolean;
  /** Which of Deft's variables the model's processes see. */
  readonly environment: ShellEnvironmentPolicy;
  readonly bwrapPath?: string;
  readonly unsharePath?: string;
}

/** The policy for `workspace` under `settings` (the sandbox mode already resolved). */
export function processPolicy(workspace: string, settings: PolicySettings): ProcessPolicy {
  return {
    workspace,
    sandbox: settings.sandbox ?? "none",
    network: settings.allowNetwork ?? false,
    networkProxy: settings.networkProxy,
    networkForwarded: settings.networkForwarded,
    environment: settings.shellEnvironment ?? {},
    bwrapPath: settings.bwrapPath,
    unsharePath: settings.unsharePath,
  };
}

/**
 * What a command the approval gate lets through without asking may do: nothing that lasts. It
 * runs in a fresh read-only sandbox whatever the session's mode: the workspace read-only, no
 * network, only the core variables (no secrets, none of the user's `set` values), so a
 * repository that makes a "read-only" program run something (git's fsmonitor, a planted shell
 * function) gains nothing.
 */
export function unaskedPolicy(policy: ProcessPolicy): ProcessPolicy {
  return {
    ...policy,
    sandbox: "read-only",
    network: false,
    networkProxy: undefined,
    networkForwarded: false,
    environment: { inherit: "core" },
  };
}

/** Settings the model's shell does not need to be interactive; set in every shell. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  MANPAGER: "cat",
  SYSTEMD_PAGER: "cat",
  GIT_EDITOR: "true",
  EDITOR: "true",
  VISUAL: "true",
  GIT_TERMINAL_PROMPT: "0",
  GCM_INTERACTIVE: "never",
  DEBIAN_FRONTEND: "noninteractive",
  TERM: "dumb",
  NO_COLOR: "1",
  CLICOLOR: "0",
};

/** Variables Deft's own processes need besides the core ones: where Deno keeps its cache. */
const DENO_VARIABLES = ["DENO_DIR", "NO_COLOR"];

/**
 * The variables a configured server inherits from Deft's environment; everything else (API keys
 * above all) must be passed on purpose with its `env`. The MCP SDK's list, plus locale, temp dir
 * and Deno's cache.
 */
const SERVER_VARIABLES = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "TMPDIR",
  "TZ",
  "DENO_DIR",
];

/** Inherited git variables that could override the hardening or start a program. */
const GIT_PROGRAM_VARIABLES = [
  "GIT_CONFIG*",
  "GIT_EXTERNAL_DIFF*",
  "GIT_EXEC_PATH*",
  "GIT_SSH*",
  "GIT_ASKPASS*",
  "GIT_PAGER*",
  "GIT_EDITOR*",
];

/** The environment kinds of the children Deft starts. */
export type EnvironmentKind =
  /** The model's shell and what it runs: the `shell_environment` policy, non-interactive. */
  | "shell"
  /** Deft itself inside the sandbox: core variables and Deno's own, nothing secret. */
  | "tool-host"
  /** git, hardened by git.ts: Deft's variables without secrets and without git's own overrides. */
  | "git"
  /** Programs the user configured (MCP servers): a few basic variables, plus their own `env`. */
  | "server"
  /** Deft's own helper scripts (signals, sweeps): nothing at all. */
  | "none"
  /** Another Deft (a batch task): Deft's own, keys included, since it calls the model. */
  | "deft";

/**
 * The one environment builder: `kind`'s variables from Deft's own environment, under `policy`'s
 * shell environment where the kind is the model's, then `extra` on top. Variables whose value
 * is code (exported bash functions) never pass.
 */
export function childEnvironment(
  kind: EnvironmentKind,
  policy?: Pick<ProcessPolicy, "environment">,
  extra: Record<string, string> = {},
): Record<string, string> {
  let env: Record<string, string>;
  switch (kind) {
    case "shell":
      env = { ...shellEnvironment(policy?.environment), ...NON_INTERACTIVE_ENV };
      break;
    case "tool-host":
      env = shellEnvironment({ include_only: [...CORE_VARIABLES, ...DENO_VARIABLES] });
      // Deno resolves `--allow-run=bash,bwrap` on PATH as it starts and fails without one: a Deft
      // that may not read its environment (no --allow-env) still gives the host the usual places.
      env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
      break;
    case "git":
      // The default exclusions (secret-looking names), never the user's shell policy: git needs
      // HOME and PATH, not keys. Inherited GIT_* settings that run programs are dropped too.
      env = shellEnvironment({ exclude: [...GIT_PROGRAM_VARIABLES] });
      break;
    case "server": {
      const own = envObject();
      env = {};
      for (const name of SERVER_VARIABLES) {
        // Exported bash functions look like `() { ...`; they are code, not settings.
        if (own[name] !== undefined && !own[name].startsWith("()")) env[name] = own[name];
      }
      break;
    }
    case "none":
      env = {};
      break;
    case "deft":
      env = Object.fromEntries(
        Object.entries(envObject()).filter(([name]) => !name.startsWith("BASH_FUNC_")),
      );
      break;
  }
  return { ...env, ...extra };
}

/** Where the shell starts, and what else it must see. */
export interface ShellPlaces {
  /** Where the shell starts; must exist. */
  cwd: string;
  /** Deft's folders the shell must read (the saved-output folder), read-only inside. */
  visible?: readonly string[];
  /** Variables of Deft's own to add (session tags). */
  env?: Record<string, string>;
}

/**
 * The model's persistent shell: `bash --noprofile --norc` in the policy's sandbox (a PID
 * namespace at least), with the shell environment. Throws `SandboxUnavailableError`.
 */
export function shellLaunch(policy: ProcessPolicy, places: ShellPlaces): Launch {
  return {
    ...confined(policy, ["bash", "--noprofile", "--norc"], places.cwd, places.visible),
    env: { ...childEnvironment("shell", policy, places.env), ...proxyVariables(policy) },
    // Outside a sandbox the shell starts where it is asked; inside, bwrap changes directory.
    cwd: policy.sandbox === "none" ? places.cwd : policy.workspace,
  };
}

/**
 * A batch task's `test` command: the model's code, so it runs like the model's shell, in the
 * task's sandbox with the shell environment, never with Deft's own.
 */
export function taskTestLaunch(
  policy: ProcessPolicy,
  command: string,
  extra: Record<string, string>,
): Launch {
  const { program, args } = confined(
    policy,
    ["bash", "--noprofile", "--norc", "-c", command],
    policy.workspace,
  );
  return {
    program,
    args,
    env: { ...childEnvironment("shell", policy, extra), ...proxyVariables(policy) },
    cwd: policy.workspace,
  };
}

/** The proxy's socket when `policy` sends the sandbox's network through it, else undefined. */
function proxied(policy: ProcessPolicy): string | undefined {
  return policy.sandbox !== "none" && !policy.network ? policy.networkProxy : undefined;
}

/** The proxy variables, last, over anything the shell environment set (policy/network). */
function proxyVariables(policy: ProcessPolicy): Record<string, string> {
  return proxied(policy) || policy.networkForwarded ? proxyEnvironment() : {};
}

/** Deft's own code and folders for the sandboxed tool host. */
export interface ToolHostPlaces {
  /** The argv that starts Deft as the tool host (`deno run … main.ts __tool-host`). */
  argv: readonly string[];
  /** Deft's code and Deno, read-only inside. */
  readOnly: readonly string[];
  /**
   * Deft's own folders the host writes, writable inside: the editors' host its private temp
   * folder; the code graph's host that and the graph's folder in Deft's cache.
   */
  writable: readonly string[];
  /** The workspace read-only inside, whatever the mode (a host that only reads it). */
  readOnlyWorkspace?: boolean;
}

/** Deft itself as the sandboxed tool host, confined like the shell. */
export function toolHostLaunch(policy: ProcessPolicy, places: ToolHostPlaces): Launch {
  const mode = places.readOnlyWorkspace
    ? "read-only"
    : policy.sandbox === "none"
    ? "workspace-write"
    : policy.sandbox;
  const { program, args } = sandboxCommand(places.argv, {
    mode,
    workspace: policy.workspace,
    cwd: policy.workspace,
    bwrapPath: policy.bwrapPath,
    readOnlyPaths: places.readOnly,
    writablePaths: places.writable,
  });
  return {
    program,
    args,
    // The workspace is a mount of its own inside: git must look past it for an enclosing
    // repository.
    env: childEnvironment("tool-host", policy, { GIT_DISCOVERY_ACROSS_FILESYSTEM: "1" }),
    cwd: policy.workspace,
  };
}

/** An MCP server the user configured: their program, where it starts, what its entry says. */
export interface McpServerPlaces {
  command: string;
  args?: readonly string[];
  /** The entry's own variables, on top of a few basic ones. */
  env?: Record<string, string>;
  /** Where it starts (the workspace unless its entry says). */
  cwd: string;
  /** The entry's `sandbox`: `none` runs it outside, `read-only` keeps the workspace read-only. */
  sandbox?: "none" | "read-only";
}

/**
 * Where a configured MCP server runs under the session's `sandbox`: in the same sandbox unless
 * its entry says `none` (the user's escape hatch; a repository cannot set it) or `read-only`
 * (narrower: the workspace read-only too).
 */
export function mcpServerSandbox(sandbox: SandboxMode, entry?: "none" | "read-only"): SandboxMode {
  return entry ?? sandbox;
}

/**
 * An MCP server the user configured: their program, with a few basic variables plus its own
 * `env`. Sandboxed (see `mcpServerSandbox`) it is confined like the model's shell, since the
 * model chooses every argument of its tools: the file system read-only but the workspace (or
 * not even that), the policy's network (none, or the list through the proxy's forwarder with
 * the proxy variables, or all with `allow_network`), host sockets hidden, its own PID namespace;
 * the files its command line names and its `cwd` are shown read-only where the sandbox's private
 * /tmp would hide them (never a folder it names: one could hold a host's sockets). Without
 * `policy`, or with `none`, it runs as the
 * user. Throws `Deno.errors.NotFound` for a sandboxed program or `cwd` that is not there (the
 * caller's message names which), `SandboxUnavailableError` for a sandbox that cannot be made.
 */
export function mcpServerLaunch(server: McpServerPlaces, policy?: ProcessPolicy): Launch {
  const env = childEnvironment("server", undefined, server.env ?? {});
  const mode = policy ? mcpServerSandbox(policy.sandbox, server.sandbox) : "none";
  if (!policy || mode === "none") {
    return { program: server.command, args: [...(server.args ?? [])], env, cwd: server.cwd };
  }
  // bwrap would only say "execvp failed" after it started: say what is missing instead.
  if (!isFolder(server.cwd)) throw new Deno.errors.NotFound(`no folder ${server.cwd}`);
  const program = findExecutable(server.command, env.PATH);
  if (program === undefined) throw new Deno.errors.NotFound(`no program ${server.command}`);
  const argv = [program, ...(server.args ?? [])];
  // What the sandbox's private /tmp would hide: the files the command line names (never a
  // folder, which could hold a host's sockets), and the folder it starts in.
  const shown = argv.filter((path) => hidden(path, policy.workspace, "file"));
  if (hidden(server.cwd, policy.workspace, "folder")) shown.push(server.cwd);
  const inside = hostSandboxed({ ...policy, sandbox: mode }, argv, server.cwd, [...new Set(shown)]);
  return {
    program: inside.program,
    args: inside.args,
    env: { ...env, ...inside.proxyEnv },
    // Inside, bwrap changes directory.
    cwd: policy.workspace,
  };
}

/**
 * `argv` of a program the user configured, started on the host in the session's sandbox (an MCP
 * server, a hook): confined by `policy` as the model's shell is, in `cwd`, with `visible` shown
 * read-only. With a network list that means its own network namespace, the proxy's socket bound
 * in and the forwarder started first; `proxyEnv` then holds the proxy variables, to be set last
 * over the program's own (empty otherwise). A container's forwarder is no use here, on the host.
 */
export function hostSandboxed(
  policy: ProcessPolicy,
  argv: readonly string[],
  cwd: string,
  visible: readonly string[] = [],
): { program: string; args: string[]; proxyEnv: Record<string, string> } {
  const onHost: ProcessPolicy = { ...policy, networkForwarded: false };
  return { ...confined(onHost, argv, cwd, visible), proxyEnv: proxyVariables(onHost) };
}

function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * True for an absolute path of a regular `file` (or a `folder`) under /tmp and outside
 * `workspace`: the sandbox's private /tmp would hide it (a folder inside the workspace keeps the
 * workspace's own mount, writable or not).
 */
function hidden(path: string, workspace: string, kind: "file" | "folder"): boolean {
  if (!path.startsWith("/")) return false;
  try {
    const info = Deno.statSync(path);
    const real = Deno.realPathSync(path);
    return (kind === "file" ? info.isFile : info.isDirectory) && real.startsWith("/tmp/") &&
      !isInside(workspace, real);
  } catch {
    return false;
  }
}

/**
 * Another Deft, as a batch task: the leader of a new session (`setsid`) that dies with this
 * Deft (setpriv's parent-death signal, where setpriv exists), with Deft's own environment.
 */
export function deftTaskLaunch(
  argv: readonly string[],
  cwd: string | undefined,
  extra: Record<string, string>,
): Launch {
  return groupLeader(argv, cwd, childEnvironment("deft", undefined, extra));
}

/**
 * `launch` as the leader of a new session and process group, dying with this Deft. setpriv comes
 * first: it execs setsid, which (not a group leader) execs the program without forking, so the
 * parent-death signal stays on the program's own process.
 */
export function groupLeader(
  argv: readonly string[],
  cwd: string | undefined,
  env: Record<string, string>,
): Launch {
  const [program, ...args] = [...dieWithDeftPrefix(), "setsid", ...argv];
  return { program, args, env, cwd };
}

/**
 * One of Deft's own helpers: a bash script that signals or sweeps processes (`none`: it must not
 * see the session's variables), or a Slurm client submitting Deft's own batch (`deft`: the array
 * tasks inherit what it is given, and they call the model).
 */
export function helperLaunch(
  program: string,
  args: readonly string[],
  env: "none" | "deft" = "none",
): Launch {
  return { program, args: [...args], env: childEnvironment(env) };
}

/** `argv` confined by `policy` in `cwd`, with `visible` folders shown read-only. */
function confined(
  policy: ProcessPolicy,
  argv: readonly string[],
  cwd: string,
  visible: readonly string[] = [],
): { program: string; args: string[] } {
  // With a network list, the command starts behind the forwarder to the proxy's socket.
  const socket = proxied(policy);
  return sandboxCommand(socket ? behindForwarder(argv, socket) : argv, {
    mode: policy.sandbox,
    workspace: policy.workspace,
    cwd,
    allowNetwork: policy.network,
    // What the workspace's own bind shows keeps the workspace's rules (Deft run on its own tree).
    readOnlyPaths: socket
      ? [...visible, ...forwarderFiles().filter((p) => !shownByWorkspace(policy.workspace, p))]
      : visible,
    writablePaths: socket ? [socket, socksSocketOf(socket)] : [],
    bwrapPath: policy.bwrapPath,
    unsharePath: policy.unsharePath,
  });
}

// The container views live in container_cli.ts; re-exported for the modules that import them here.
export {
  checkContainerWord,
  type ContainerBind,
  type ContainerBuild,
  containerBuildLaunch,
  type ContainerCli,
  type ContainerExec,
  containerExecLaunch,
  containerImageLaunch,
  containerImageRemoveLaunch,
  containerImagesLaunch,
  containerImageTagsLaunch,
  containerInspectLaunch,
  containerLaunch,
  containerListLaunch,
  containerLoadLaunch,
  containerProbeLaunch,
  containerRemoveLaunch,
  containerSeccompProfile,
  type ContainerSpec,
  containerTagLaunch,
  dockerClientConfig,
  dockerClientConfigDir,
  SECCOMP_BASE_PROFILES,
} from "./container_cli.ts";

/**
 * Deno fetching the npm packages of Deft's source tree into its cache (`deno cache`), before that
 * cache is bound read-only into a container that has no network to fetch them. Deft's own Deno,
 * with the environment of Deft's own processes (core variables and Deno's). No `--` before the
 * entry: Deno would take it for the script's own arguments and cache nothing; it is an absolute
 * path of Deft's own code, never an option.
 */
export function denoCacheLaunch(deno: string, main: string, config: string): Launch {
  return {
    program: deno,
    args: ["cache", "--quiet", "--node-modules-dir=none", "--config", config, main],
    env: childEnvironment("tool-host"),
  };
}
