/**
 * Signals the processes a shell session started. Every process the session starts inherits
 * marker variables in its environment, and Linux shows a process's initial environment in
 * /proc/<pid>/environ, so a scan finds them even after they left the session's process group
 * (`setsid`, double forks).
 *
 * The scan and the signals run in a short-lived bash rather than in Deno: `Deno.kill` needs
 * unrestricted run permission and /proc needs read permission, and the tool host grants
 * neither (it may start only the tool programs: bash, bwrap, git …). The helper uses bash builtins
 * only.
 */

import { helperLaunch, runChild, spawnChild } from "../../policy/process.ts";

/** Which of a session's processes to signal. */
export interface SignalRequest {
  signal: "INT" | "KILL";
  /** The variable every process of the session carries, e.g. `DEFT_BASH_SESSION=3fa9…`. */
  session: { name: string; value: string };
  /** The variable naming the call that started a process, and the calls to signal. */
  calls: { name: string; values: readonly string[] } | "all";
  /** Process groups to signal as a whole first. */
  groups?: readonly number[];
  /** Pids never to signal. */
  exclude?: readonly number[];
  /** Scan again while something was found, up to this many times (forks race the scan). */
  rounds?: number;
}

// $1 signal, $2 session NAME=value, $3 call variable, $4 call values ("*": any), $5 pids to
// skip, $6 groups, $7 rounds. Environments are NUL-separated; they are rejoined with newlines.
const SCRIPT = `
sig=$1 tag=$2 callvar=$3 calls=" $4 " skip=" $5 $$ " groups=$6 rounds=$7 nl=$'\\n'
for group in $groups; do builtin kill -s "$sig" -- "-$group" 2>/dev/null; done
for ((round = 0; round < rounds; round++)); do
  hit=0
  for file in /proc/[0-9]*/environ; do
    pid=\${file#/proc/} pid=\${pid%/environ}
    [[ $skip == *" $pid "* ]] && continue
    mapfile -d '' -t vars < "$file" 2>/dev/null || continue
    ((\${#vars[@]})) || continue
    printf -v env "$nl%s" "\${vars[@]}"
    env+=$nl
    [[ $env == *"$nl$tag$nl"* ]] || continue
    if [[ $calls != " * " ]]; then
      rest=\${env#*"$nl$callvar="}
      [[ $rest == "$env" ]] && continue
      [[ $calls == *" \${rest%%"$nl"*} "* ]] || continue
    fi
    builtin kill -s "$sig" "$pid" 2>/dev/null && hit=1
    # Every process: the group it leads too (a background shell's, whose members may have
    # cleared their environment).
    [[ $calls == " * " ]] || continue
    read -r stat < "/proc/$pid/stat" 2>/dev/null || continue
    rest=\${stat##*) } rest=\${rest#* } rest=\${rest#* }
    [[ \${rest%% *} == "$pid" ]] && builtin kill -s "$sig" -- "-$pid" 2>/dev/null
  done
  ((hit)) || break
done
`;

/** Sends the signal; resolves when the helper has finished. Never throws. */
export async function signalSession(request: SignalRequest): Promise<void> {
  const calls = request.calls === "all" ? null : request.calls;
  const args = [
    "--noprofile",
    "--norc",
    "-c",
    SCRIPT,
    "deft-signal",
    request.signal,
    `${request.session.name}=${request.session.value}`,
    calls?.name ?? "",
    calls ? calls.values.join(" ") : "*",
    (request.exclude ?? []).join(" "),
    (request.groups ?? []).filter((g) => g > 1).join(" "),
    String(request.rounds ?? 1),
  ];
  try {
    // A clean environment: no BASH_ENV to source, no session tag of our own to match.
    await runChild(helperLaunch("bash", args), { stdout: "null", stderr: "null" });
  } catch {
    // Without bash there is no session to signal either.
  }
}

// $1 the shell's pid, $2 session NAME=value. Waits until the shell is gone (or a zombie) or our
// end of stdin closes (the worker that started us was terminated), then runs SCRIPT: SIGKILL to
// every process carrying the session's marker, three rounds (the groups are the main thread's). stdin is a
// pipe nobody writes to, so `read -t` is a sleep without starting a process.
const REAPER = `
shell=$1 tag=$2
while :; do
  read -r -t 0.5 _ && continue
  (($? > 128)) || break
  [[ -r /proc/$shell/stat ]] || break
  read -r stat < "/proc/$shell/stat" 2>/dev/null || break
  rest=\${stat##*) }
  [[ \${rest%% *} == [ZX] ]] && break
done
set -- KILL "$tag" "" "*" "" "" 3
${SCRIPT}
`;

/** A watchdog that ends a session's processes once its shell is gone; see `startReaper`. */
export interface Reaper {
  /** Ends the watchdog without a scan (the caller scanned already). Never throws. */
  stop(): Promise<void>;
}

/**
 * Starts a watchdog for a shell that no PID namespace holds (neither bwrap nor unshare). When
 * the tool host is terminated (a call past its deadline), no code of the session runs to end
 * the jobs that left the shell's process group (`setsid`); the main thread kills only the groups
 * it was told of. The watchdog is a separate process nobody kills then: it notices the shell's
 * death or the closing of its stdin and ends what carries the session's marker. Undefined when
 * it cannot be started (then only the session's own stop cleans up).
 */
export function startReaper(
  shellPid: number,
  session: { name: string; value: string },
): Reaper | undefined {
  let child: Deno.ChildProcess;
  try {
    child = spawnChild(
      helperLaunch("bash", [
        "--noprofile",
        "--norc",
        "-c",
        REAPER,
        "deft-reaper",
        String(shellPid),
        `${session.name}=${session.value}`,
      ]),
      { stdin: "piped", stdout: "null", stderr: "null", detached: true },
    );
  } catch {
    return undefined;
  }
  // Neither it nor its pipe keeps the worker alive; it ends on its own with the shell.
  child.unref();
  const status = child.status.catch(() => {});
  return {
    async stop() {
      // Waited for now, so the wait itself must keep the event loop alive.
      child.ref();
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await status;
      await child.stdin.close().catch(() => {});
    },
  };
}

/** Which of a session's processes make up one background shell (see `signalJob`). */
export interface JobRequest {
  /** The variable every process of the session carries, e.g. `DEFT_BASH_SESSION=3fa9…`. */
  session: { name: string; value: string };
  /** The variable every process the job exec'd carries, e.g. `DEFT_BASH_JOB=bg_…`. */
  job: { name: string; value: string };
  /**
   * The job's process group as its shell numbers it (`$!`, in the shell's PID namespace), while
   * its leader still runs; 0 when it may be gone (its number may belong to another process).
   */
  group: number;
}

// $1 session NAME=value, $2 job NAME=value, $3 the job's group in the shell's PID namespace (0:
// none). A process of the session is the job's when it carries the job's variable or sits in
// the job's group (the subshells that never exec'd carry the shell's environment, not the
// job's); the last field of NSpgid is its group in the innermost namespace, the shell's. It is
// killed, and with it the group it leads (members that cleared their environment). Rounds as
// in SCRIPT: forks race the scan.
const JOB_SCRIPT = `
tag=$1 job=$2 group=$3 nl=$'\\n'
for ((round = 0; round < 4; round++)); do
  hit=0
  for file in /proc/[0-9]*/environ; do
    pid=\${file#/proc/} pid=\${pid%/environ}
    ((pid == $$)) && continue
    mapfile -d '' -t vars < "$file" 2>/dev/null || continue
    ((\${#vars[@]})) || continue
    printf -v env "$nl%s" "\${vars[@]}"
    env+=$nl
    [[ $env == *"$nl$tag$nl"* ]] || continue
    if [[ $env != *"$nl$job$nl"* ]]; then
      ((group > 0)) || continue
      ns=
      while read -r -a fields; do
        [[ \${fields[0]} == NSpgid: ]] && { ns=\${fields[-1]}; break; }
      done < "/proc/$pid/status" 2>/dev/null
      [[ $ns == "$group" ]] || continue
    fi
    read -r stat < "/proc/$pid/stat" 2>/dev/null || continue
    rest=\${stat##*) } rest=\${rest#* } rest=\${rest#* } pgrp=\${rest%% *}
    builtin kill -s KILL "$pid" 2>/dev/null && hit=1
    [[ $pgrp == "$pid" ]] && builtin kill -s KILL -- "-$pgrp" 2>/dev/null
  done
  ((hit)) || break
done
`;

/**
 * Kills every process of one background shell: what carries its variable (even after `setsid`)
 * and what sits in its process group, with the groups they lead. Resolves when done; never
 * throws.
 */
export async function signalJob(request: JobRequest): Promise<void> {
  const args = [
    "--noprofile",
    "--norc",
    "-c",
    JOB_SCRIPT,
    "deft-kill-job",
    `${request.session.name}=${request.session.value}`,
    `${request.job.name}=${request.job.value}`,
    String(Math.max(0, Math.trunc(request.group))),
  ];
  try {
    await runChild(helperLaunch("bash", args), { stdout: "null", stderr: "null" });
  } catch {
    // Without bash there is no job to kill either.
  }
}

// $@ the FIFOs to make, mode 0600. mkfifo is not a builtin; PATH is set here (the helper gets
// no environment) and the helper leaves its starting directory first, so nothing the
// workspace holds is what runs.
const MKFIFO = 'builtin cd / && PATH=/usr/bin:/bin exec mkfifo -m 600 -- "$@"';

/** Makes named pipes at `paths` (absolute). Throws when they could not be made. */
export async function makeFifos(paths: readonly string[]): Promise<void> {
  const launch = helperLaunch("bash", [
    "--noprofile",
    "--norc",
    "-c",
    MKFIFO,
    "deft-mkfifo",
    ...paths,
  ]);
  const { success, stderr } = await runChild(launch, { stdout: "null" });
  if (!success) {
    throw new Error(
      `could not make the pipes for its output: ${new TextDecoder().decode(stderr).trim()}`,
    );
  }
}
