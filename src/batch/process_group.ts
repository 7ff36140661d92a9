/**
 * Children of a batch run in their own session and process group (`setsid`), tagged with an
 * environment variable. Stopping a task signals its group, and a last sweep over /proc finds any
 * process that carries the tag but left the group (a daemonised server, a double fork), so a
 * stopped or timed-out task leaves nothing running.
 */

import { helperLaunch, type Launch, runChild, spawnChild } from "../policy/process.ts";

/** The variable every process of a batch task inherits: `DEFT_BATCH_TASK=<run>/<id>`. */
export const TASK_TAG = "DEFT_BATCH_TASK";

/**
 * Spawns `argv` as the leader of a new session; stdin is closed. It gets SIGKILL when this
 * process dies (setpriv's parent-death signal, where setpriv exists), so a batch killed outright
 * does not leave its tasks running (and calling a paid model) with nobody to collect them.
 */
/**
 * Starts `launch`, which policy/process.ts made the leader of a new session that dies with this
 * Deft (`deftTaskLaunch`, `taskTestLaunch` wrapped by `groupLeader`); stdin is closed.
 */
export function spawnGroup(launch: Launch, stdout: "piped" | "null"): Deno.ChildProcess {
  return spawnChild(launch, { stdin: "null", stdout, stderr: "piped" });
}

/** Sends `signal` to the process group led by `pid`; quiet when it is gone. */
export function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

// $1 is the tag as NAME=value; $2 is a newline for an exact match, empty for a prefix. Environments are NUL-separated; they are rejoined with newlines.
// It runs in bash because Deno reads /proc only with --allow-all, which Deft is not given.
const SWEEP = `
tag=$1 nl=$'\\n' killed=0
for ((round = 0; round < 5; round++)); do
  hit=0
  for file in /proc/[0-9]*/environ; do
    pid=\${file#/proc/} pid=\${pid%/environ}
    [[ $pid == "$$" ]] && continue
    mapfile -d '' -t vars < "$file" 2>/dev/null || continue
    ((\${#vars[@]})) || continue
    printf -v env "$nl%s" "\${vars[@]}"
    [[ "$env$nl" == *"$nl$tag"$2* ]] || continue
    builtin kill -s KILL "$pid" 2>/dev/null && hit=1 && ((killed++))
  done
  ((hit)) || break
  sleep 0.05
done
echo "$killed"
`;

/**
 * Kills every process whose environment carries `TASK_TAG=tag` (with `prefix`, any value that
 * starts with `tag`); a group signal misses those that left the group. Returns how many it killed.
 */
export async function killTagged(tag: string, prefix = false): Promise<number> {
  try {
    const out = await runChild(
      helperLaunch("bash", [
        "--noprofile",
        "--norc",
        "-c",
        SWEEP,
        "deft-sweep",
        `${TASK_TAG}=${tag}`,
        prefix ? "" : "\n",
      ]),
      { stderr: "null" },
    );
    return Number(new TextDecoder().decode(out.stdout).trim()) || 0;
  } catch {
    return 0; // no bash: the group signal is all there is
  }
}

/** Whether process `pid` exists (bash's `kill -0`, for the same reason as above). */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    const out = await runChild(
      helperLaunch("bash", [
        "--noprofile",
        "--norc",
        "-c",
        'builtin kill -0 "$1" 2>/dev/null',
        "deft-alive",
        String(pid),
      ]),
      { stdout: "null", stderr: "null" },
    );
    return out.success;
  } catch {
    return false;
  }
}
