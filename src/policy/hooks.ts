/**
 * A hook's launch: the command the user configured, run by `bash -c` in the session's
 * workspace, the leader of its own process group (so a timeout kills all of it), with the
 * core variables (`CORE_VARIABLES`: HOME, PATH, SHELL, USER, locale, temp dir, TERM, TZ) minus
 * anything that looks like a secret, plus `DEFT_PROJECT_DIR` and `CLAUDE_PROJECT_DIR` (the
 * workspace, so hooks written for Claude Code find the project), plus the variables the hook's
 * own `env:` names. Deft's provider keys reach a hook only when its `env:` names them. In a
 * container session the hook still runs on the host (its program is the user's, there), told the
 * container by `DEFT_CONTAINER`, `DEFT_CONTAINER_RUNTIME` and `DEFT_CONTAINER_WORKSPACE`, and
 * given the runtime's connection variables (`DOCKER_HOST`, …) so it can `docker exec` there.
 */
import { envObject } from "../env.ts";
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
  /** The session's workspace: where the hook starts, and its `DEFT_PROJECT_DIR`. */
  projectDir: string;
  /** Names of Deft's own variables the hook's config passes on purpose. */
  passEnv?: readonly string[];
  /** The session's container: `DEFT_CONTAINER` (its id), `_RUNTIME` and `_WORKSPACE`. */
  container?: { id: string; runtime: string; workspace: string };
}

/** The launch of one hook; start it detached (its own process group). */
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
    // How the runtime's client reaches its daemon (no secrets), so `docker exec` works as Deft's.
    for (const name of RUNTIME_CONNECTION) {
      const value = own[name];
      if (value !== undefined && !value.startsWith("()")) env[name] = value;
    }
    env.DEFT_CONTAINER = places.container.id;
    env.DEFT_CONTAINER_RUNTIME = places.container.runtime;
    env.DEFT_CONTAINER_WORKSPACE = places.container.workspace;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  return { program: "bash", args: ["-c", places.command], env, cwd: places.projectDir };
}
