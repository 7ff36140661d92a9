/**
 * git, and the small steps around it, inside a container: run through the runtime's `exec`, with
 * git hardened as on the host (policy/git.ts) and every step within the limits of
 * ./git_limits.ts.
 *
 * Everything inside is the model's, `git` and `sh` included: it may have put a program in git's
 * place that never returns, prints without end or ignores SIGTERM. Three things keep Deft's
 * waiting bounded all the same:
 *
 * - each step has the deadline and output cap; past them Deft kills the runtime's client;
 * - killing the client does not end what it started inside (the runtime keeps an `exec`'s
 *   process running), so every step carries a mark in its environment (`DEFT_EXEC_MARK`), and a
 *   stopped step's processes — and what they started, which inherits the mark — are killed
 *   inside with SIGKILL by one more bounded step;
 * - once a step in a container was stopped, its `ContainerGitGuard` refuses every later one at
 *   once: a patch, a checkpoint and the check "is this a repository" each wait out the deadline
 *   no more than once between them, instead of once each.
 */
import { type ContainerCli, type ContainerExec, containerExecLaunch } from "./process.ts";
import { type GitInvocation, gitInvocation, repositoryOverrides } from "./git.ts";
import {
  describe,
  finish,
  GitLimitError,
  type GitLimits,
  type GitResult,
  runLimited,
} from "./git_limits.ts";
import { spawnChild } from "./process.ts";

/**
 * What Deft knows of the steps it ran in one container: whether one was stopped by a limit
 * (`stopped`, its message). One per container a session uses (src/container/patch.ts keeps them).
 */
export class ContainerGitGuard {
  stopped?: string;
}

/** The variable that marks each step's processes inside (see the module's comment). */
const MARK = "DEFT_EXEC_MARK";

/** How long the step that kills a stopped step's processes may take. */
const KILL_DEADLINE_MS = 15_000;

/**
 * Kills, twice over (for one that forked meanwhile), every process inside whose environment holds
 * `DEFT_EXEC_MARK=$1`. Only /proc and the shell's own `kill` are used besides `tr` and `grep`.
 */
const KILL_MARKED_SCRIPT = `for round in 1 2; do
  for d in /proc/[0-9]*; do
    if tr '\\000' '\\n' < "$d/environ" 2>/dev/null | grep -qxF "${MARK}=$1"; then
      kill -KILL "\${d#/proc/}" 2>/dev/null
    fi
  done
done
true`;

/**
 * Runs `exec` inside the container within `limits`, as one step of Deft's (`what` names it in
 * messages), marked so that a stopped step's processes are killed inside too. A guard that saw a
 * step stopped refuses at once (GitLimitError); a step stopped now marks it so.
 */
export async function runInContainer(
  cli: ContainerCli,
  id: string,
  exec: ContainerExec,
  what: string,
  stdin: Uint8Array | undefined,
  limits: GitLimits,
  guard?: ContainerGitGuard,
): Promise<GitResult> {
  if (guard?.stopped) {
    throw new GitLimitError(
      `${what} was not run: a step before it in the container was stopped (${guard.stopped}), ` +
        "so Deft runs no more git there this session. Look at the container's `git` (and what " +
        "is first on PATH there).",
    );
  }
  const mark = crypto.randomUUID();
  const launch = containerExecLaunch(cli, id, {
    ...exec,
    env: { ...exec.env, [MARK]: mark },
    interactive: stdin !== undefined,
  });
  try {
    const child = spawnChild(launch, { stdin: stdin ? "piped" : "null" });
    return await finish(child, what, stdin, limits);
  } catch (e) {
    if (!(e instanceof GitLimitError)) throw e;
    if (guard) guard.stopped = e.message.split(": Deft stopped it")[0];
    await killMarked(cli, id, mark);
    throw e;
  }
}

/** Kills the processes of a stopped step inside (quietly: the container may be gone). */
async function killMarked(cli: ContainerCli, id: string, mark: string): Promise<void> {
  await runLimited(
    containerExecLaunch(cli, id, { argv: ["sh", "-c", KILL_MARKED_SCRIPT, "sh", mark] }),
    "ending a stopped step",
    undefined,
    { timeoutMs: KILL_DEADLINE_MS, maxOutputBytes: 64 * 1024 },
  ).catch(() => {});
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
 * (nothing else of Deft's environment goes in). `stdin` is fed to git. Each git started (the
 * config listing, then the command) is a step of `runInContainer`: within `limits`, killed inside
 * when stopped, and refused once `guard` saw a step stopped.
 */
export async function runGitInContainer(
  cli: ContainerCli,
  id: string,
  cwd: string,
  args: readonly string[],
  env: Record<string, string> = {},
  stdin?: Uint8Array,
  limits: GitLimits = {},
  guard?: ContainerGitGuard,
): Promise<GitResult> {
  const inside = (invocation: GitInvocation, input?: Uint8Array): Promise<GitResult> => {
    const gitEnv = Object.fromEntries(
      Object.entries(invocation.env).filter(([k]) =>
        k in env || HARDENING_VARIABLES.has(k) || /^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(k)
      ),
    );
    return runInContainer(
      cli,
      id,
      { argv: [invocation.program, ...invocation.args], env: gitEnv, workdir: cwd },
      `${describe(invocation.args)} (in the container)`,
      input,
      limits,
      guard,
    );
  };
  const scoped = await inside(gitInvocation(["config", "--list", "-z", "--show-scope"]));
  const listed = scoped.ok ? scoped : await inside(gitInvocation(["config", "--list", "-z"]));
  const drivers = listed.ok
    ? repositoryOverrides(listed.out, { scoped: scoped.ok, untrusted: true })
    : [];
  return inside(gitInvocation(args, env, drivers), stdin);
}
