/**
 * The one place a child process is built: every child Deft starts goes through `spawnChild`,
 * `runChild` or `runChildSync` with a `Launch` a policy view made, and is started with the
 * inherited environment cleared, so nothing of Deft's reaches it unless the view put it there.
 * tests/policy/process_test.ts fails on a `Deno.Command` anywhere else.
 *
 * This module sits below process.ts and sandbox.ts (both use it), so the sandbox's own probes
 * (is bubblewrap usable, which socket folders exist) start the same way as every other child.
 */
import { readEnv } from "../env.ts";

/** A child process, fully decided: program, arguments, its whole environment, where it starts. */
export interface Launch {
  program: string;
  args: string[];
  /** The child's entire environment: nothing of Deft's is inherited beyond it. */
  env: Record<string, string>;
  cwd?: string;
}

/** How a child's standard streams are wired, and what else `Deno.Command` is told. */
export interface ChildIo {
  stdin?: "piped" | "inherit" | "null";
  stdout?: "piped" | "inherit" | "null";
  stderr?: "piped" | "inherit" | "null";
  /** A new session and process group (no controlling terminal; one group to kill). */
  detached?: boolean;
  signal?: AbortSignal;
}

/**
 * One of the sandbox's own probes (bwrap, unshare, setpriv tried on `true`; bash listing
 * folders): nothing of Deft's environment but `PATH`, which finds the program.
 */
export function probeLaunch(program: string, args: readonly string[]): Launch {
  return { program, args: [...args], env: { PATH: readEnv("PATH") ?? DEFAULT_PATH } };
}

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/** Starts `launch` with exactly its environment. */
export function spawnChild(launch: Launch, io: ChildIo = {}): Deno.ChildProcess {
  return command(launch, io).spawn();
}

/** Runs `launch` to its end with exactly its environment; stdout and stderr are collected. */
export function runChild(launch: Launch, io: ChildIo = {}): Promise<Deno.CommandOutput> {
  return command(launch, { stdin: "null", stdout: "piped", stderr: "piped", ...io }).output();
}

/** `runChild`, synchronously (for the quick probes and diffs that cannot wait). */
export function runChildSync(launch: Launch, io: ChildIo = {}): Deno.CommandOutput {
  return command(launch, { stdin: "null", stdout: "piped", stderr: "piped", ...io }).outputSync();
}

function command(launch: Launch, io: ChildIo): Deno.Command {
  return new Deno.Command(launch.program, {
    args: launch.args,
    env: launch.env,
    clearEnv: true,
    cwd: launch.cwd,
    stdin: io.stdin ?? "null",
    stdout: io.stdout ?? "piped",
    stderr: io.stderr ?? "piped",
    detached: io.detached,
    signal: io.signal,
  });
}
