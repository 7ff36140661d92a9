/**
 * A hook's launch: the command the user configured, run by `bash -c`, the leader of its own
 * process group (so a timeout kills all of it), with the core variables (`CORE_VARIABLES`: HOME,
 * PATH, SHELL, USER, locale, temp dir, TERM, TZ) minus anything that looks like a secret, plus
 * `DEFT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (so hooks written for Claude Code find the project),
 * plus the variables the hook's own `env:` names. Deft's provider keys reach a hook only when its
 * `env:` names them.
 *
 * Where it runs:
 *
 * - By default **inside the session's sandbox**, confined exactly as the model's shell is
 *   (`hostSandboxed`, as MCP servers are, with the session's `ProcessPolicy`: its mode, workspace
 *   and network: none, the whole network with `allow_network`, or with a network list its own
 *   network namespace, the proxy's socket and forwarder and the proxy variables), so a
 *   hook that runs or reads what the model wrote (a script in the workspace, git obeying the
 *   model's `.git/config`, a formatter reading `package.json`) acts only where the model could
 *   itself. Where the session has no sandbox (`none`), the hook runs as the shell then does.
 * - With `sandbox: none` (its own config entry) **outside**, as the user, in the project folder,
 *   with Deft's hardened git settings (`HARDENED_GIT_CONFIG`, as `GIT_CONFIG_*`), so the git it
 *   runs does not start programs a repository's config names (`core.fsmonitor`, hooks, pagers).
 *
 * In a container session the hook runs on the host (its program is the user's, there), told the
 * container by `DEFT_CONTAINER`, `DEFT_CONTAINER_RUNTIME` and `DEFT_CONTAINER_WORKSPACE`; an
 * outside hook is also given the runtime's connection variables (`DOCKER_HOST`, …) so it can
 * `docker exec` there (inside the sandbox the runtime's socket is hidden).
 */
import { envObject } from "../env.ts";
import { HARDENED_GIT_CONFIG } from "./git.ts";
import {
  hostSandboxed,
  type PolicySettings,
  type ProcessPolicy,
  processPolicy,
} from "./process.ts";
import { defaultSandbox } from "./sandbox.ts";
import { CORE_VARIABLES, shellEnvironment } from "./shell_env.ts";
import type { Launch } from "./spawn.ts";

/** The variables that say where Docker's or Podman's daemon is, passed in a container session. */
const RUNTIME_CONNECTION = [
  "DOCKER_HOST",
  "DOCKER_CONTEXT",
  "CONTAINER_HOST",
  "CONTAINER_CONNECTION",
];

/** What a hook's launch is made of. */
export interface HookPlaces {
  /** The hook's command line, as configured (run by `bash -c`). */
  command: string;
  /** The session's host folder: where the hook starts, and its `DEFT_PROJECT_DIR`. */
  projectDir: string;
  /** Names of Deft's own variables the hook's config passes on purpose. */
  passEnv?: readonly string[];
  /** The session's container: `DEFT_CONTAINER` (its id), `_RUNTIME` and `_WORKSPACE`. */
  container?: { id: string; runtime: string; workspace: string };
  /**
   * Where the hook runs: `outside` (its config says `sandbox: none`), or inside the sandbox of
   * this policy (the session's, whose workspace is `projectDir`).
   */
  runs: "outside" | { policy: ProcessPolicy };
  /**
   * Files shown read-only inside the sandbox besides what it shows anyway: the scripts the
   * command names, the transcript (where the sandbox hides them, under a private /tmp).
   */
  visible?: readonly string[];
}

/**
 * The launch of one hook; start it detached (its own process group). Throws
 * `SandboxUnavailableError` when the session's sandbox cannot be made.
 */
export function hookLaunch(places: HookPlaces): Launch {
  const own = envObject();
  const env = shellEnvironment({ inherit: "core", include_only: [...CORE_VARIABLES] }, own);
  for (const name of places.passEnv ?? []) {
    const value = own[name];
    // Exported bash functions look like `() { ...`: code, not settings.
    if (value !== undefined && !value.startsWith("()")) env[name] = value;
  }
  env.DEFT_PROJECT_DIR = places.projectDir;
  env.CLAUDE_PROJECT_DIR = places.projectDir;
  if (places.container) {
    if (places.runs === "outside") {
      // How the runtime's client reaches its daemon (no secrets), so `docker exec` works as Deft's.
      for (const name of RUNTIME_CONNECTION) {
        const value = own[name];
        if (value !== undefined && !value.startsWith("()")) env[name] = value;
      }
    }
    env.DEFT_CONTAINER = places.container.id;
    env.DEFT_CONTAINER_RUNTIME = places.container.runtime;
    env.DEFT_CONTAINER_WORKSPACE = places.container.workspace;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  const argv = ["bash", "-c", places.command];
  if (places.runs === "outside") {
    Object.assign(env, hardenedGitEnvironment());
    return { program: "bash", args: argv.slice(1), env, cwd: places.projectDir };
  }
  const { policy } = places.runs;
  // The MCP servers' path: with a network list, the forwarder to the proxy starts first.
  const inside = hostSandboxed(policy, argv, places.projectDir, places.visible);
  // Outside a sandbox the hook starts where it is asked; inside, bwrap changes directory.
  return {
    program: inside.program,
    args: inside.args,
    // The proxy variables last: a hook's `env:` cannot point its clients elsewhere.
    env: { ...env, ...inside.proxyEnv },
    cwd: policy.sandbox === "none" ? places.projectDir : policy.workspace,
  };
}

/**
 * The sandbox hooks run in over `projectDir` (the session's host folder) under the session's
 * `settings`; without a mode, the default one (`workspace-write` where bubblewrap works, else
 * `none`, as for the model's shell).
 */
export function hookPolicy(projectDir: string, settings: PolicySettings = {}): ProcessPolicy {
  let workspace = projectDir;
  try {
    workspace = Deno.realPathSync(projectDir);
  } catch { /* the sandbox reports a folder that is not there */ }
  return processPolicy(workspace, {
    ...settings,
    sandbox: settings.sandbox ?? defaultSandbox(settings.bwrapPath).mode,
  });
}

/**
 * `hookPolicy`, with this process's proxy for the network list (`settings.network`) started when
 * the hooks' sandbox is to reach the network through it: a sandbox, a list, not the whole
 * network, and no proxy running for the session yet (a container session's tools have none on
 * the host; `deft serve` with no sandboxed tool). Call it only when some hook runs sandboxed.
 * The proxy's decisions reach the same listeners as the shell's (policy/network `onNetworkDecision`).
 */
export async function hookPolicyUnderList(
  projectDir: string,
  settings: PolicySettings = {},
): Promise<ProcessPolicy> {
  const policy = hookPolicy(projectDir, settings);
  if (!settings.network || policy.sandbox === "none" || policy.network || policy.networkProxy) {
    return policy;
  }
  const { ensureNetworkProxy } = await import("./network/mod.ts");
  return { ...policy, networkProxy: (await ensureNetworkProxy(settings.network)).socketPath };
}

/**
 * Deft's own git hardening as variables: git ranks `GIT_CONFIG_COUNT`'s settings above every
 * config file, so a repository's `.git/config` cannot make the hook's git start a program.
 */
export function hardenedGitEnvironment(): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(HARDENED_GIT_CONFIG.length) };
  HARDENED_GIT_CONFIG.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}
