/**
 * Children of a batch run in their own session and process group (`setsid`), tagged with an
 * environment variable. Stopping a task signals its group, and a last sweep over /proc finds any
 * process that carries the tag but left the group (a daemonised server, a double fork), so a
 * stopped or timed-out task leaves nothing running.
 */

/** The variable every process of a batch task inherits: `DEFT_BATCH_TASK=<run>/<id>`. */
export const TASK_TAG = "DEFT_BATCH_TASK";

/** Spawns `argv` as the leader of a new session; stdin is closed. */
export function spawnGroup(
  argv: string[],
  options: { cwd?: string; env: Record<string, string>; stdout: "piped" | "null" },
): Deno.ChildProcess {
  return new Deno.Command("setsid", {
    args: argv,
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: options.stdout,
    stderr: "piped",
  }).spawn();
}

/** Sends `signal` to the process group led by `pid`; quiet when it is gone. */
export function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Kills every process whose environment carries `TASK_TAG=tag`, scanning until none is left. */
export async function killTagged(tag: string): Promise<number> {
  const needle = `\0${TASK_TAG}=${tag}\0`;
  let killed = 0;
  for (let round = 0; round < 5; round++) {
    let hit = false;
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync("/proc")];
    } catch {
      return killed; // no /proc (not Linux): the group signal is all there is
    }
    for (const entry of entries) {
      const pid = Number(entry.name);
      if (!Number.isInteger(pid) || pid === Deno.pid) continue;
      let env: string;
      try {
        env = "\0" + await Deno.readTextFile(`/proc/${pid}/environ`);
      } catch {
        continue;
      }
      if (!env.includes(needle)) continue;
      try {
        Deno.kill(pid, "SIGKILL");
        hit = true;
        killed++;
      } catch {
        // exited meanwhile
      }
    }
    if (!hit) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return killed;
}
