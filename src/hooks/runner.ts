/**
 * Runs command hooks the way Claude Code does: the event's input as one JSON object on stdin,
 * exit 0 goes on (stdout may be a JSON answer), exit 2 blocks with stderr as the reason, any other
 * exit is an error that is reported and does not block. A hook that outlives its timeout is
 * killed with its whole process group; one that exits is done then, whatever it left running in
 * the background (its group is killed, and a child that left the group holding the pipes is read
 * for `EXIT_GRACE_MS` more, no longer). Its output is cut at `MAX_HOOK_OUTPUT` bytes per stream.
 * The program, its arguments and environment come from src/policy/hooks.ts (`hookLaunch`).
 */
import { hookLaunch, type HookPlaces, hookPolicy } from "../policy/hooks.ts";
import type { ProcessPolicy } from "../policy/process.ts";
import { spawnChild } from "../policy/spawn.ts";
import type { CommandHookConfig } from "../config/hooks_schema.ts";

/** Bytes of stdout (and of stderr) read from a hook; the rest is dropped and the cut reported. */
export const MAX_HOOK_OUTPUT = 256 * 1024;

/** Milliseconds the pipes are still read after the hook exited (a child may hold them open). */
const EXIT_GRACE_MS = 500;

/** Seconds a hook may run when its config gives no `timeout` (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

/** What one hook run gave back. */
export interface HookRun {
  /** The exit code; null when the hook was killed or could not start. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Output past `MAX_HOOK_OUTPUT` was dropped. */
  truncated: boolean;
  /** Why the hook could not be started. */
  startError?: string;
  /** The seconds it was given. */
  seconds?: number;
}

/** How one run differs from the hook's config. */
export interface HookRunOptions {
  /** The session's container (its id and runtime reach the hook's environment). */
  container?: HookPlaces["container"];
  /**
   * The sandbox the hook runs in unless its config says `sandbox: none` (the session's, over
   * `projectDir`); absent, the default sandbox over `projectDir` (`hookPolicy`).
   */
  policy?: ProcessPolicy;
  /** Files a sandboxed hook is shown read-only (its scripts, the transcript). */
  visible?: readonly string[];
  /** Seconds instead of the hook's `timeout` (a SessionEnd on a signal gets a short bound). */
  timeoutSeconds?: number;
}

/** Runs `hook` with `input` on its stdin, in `projectDir`. Always resolves. */
export async function runHook(
  hook: CommandHookConfig,
  input: Record<string, unknown>,
  projectDir: string,
  opts: HookRunOptions = {},
): Promise<HookRun> {
  const seconds = opts.timeoutSeconds ?? hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S;
  let child: Deno.ChildProcess;
  try {
    const runs = hook.sandbox === "none"
      ? "outside" as const
      : { policy: opts.policy ?? hookPolicy(projectDir) };
    const launch = hookLaunch({
      command: hook.command,
      projectDir,
      passEnv: hook.env,
      container: opts.container,
      runs,
      visible: opts.visible,
    });
    child = spawnChild(launch, {
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    });
  } catch (e) {
    return {
      code: null,
      stdout: "",
      stderr: "",
      timedOut: false,
      truncated: false,
      startError: (e as Error).message,
      seconds,
    };
  }
  let timedOut = false;
  const killGroup = () => {
    try {
      // Detached: the hook leads its own process group; the negative pid signals all of it.
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* already gone */ }
  };
  // A descendant that left the group could hold the pipes open: a second after the kill, stop
  // reading them.
  const giveUp = new AbortController();
  let late: ReturnType<typeof setTimeout> | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
    late = setTimeout(() => giveUp.abort(), 1000);
  }, seconds * 1000);
  const writing = (async () => {
    const writer = child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(JSON.stringify(input)));
      await writer.close();
    } catch { /* the hook need not read its input */ }
  })();
  // The hook's own exit ends it: its answer counts even when a child it left in the background
  // (in its group, or one that left it) still holds the pipes. The group goes at once, and what
  // is already in the pipes is read for a moment more.
  const status = child.status.then((status) => {
    clearTimeout(timer);
    if (!timedOut) {
      killGroup();
      late = setTimeout(() => giveUp.abort(), EXIT_GRACE_MS);
    }
    return status;
  });
  try {
    const [out, err, ended] = await Promise.all([
      readCapped(child.stdout, giveUp.signal),
      readCapped(child.stderr, giveUp.signal),
      status,
    ]);
    await writing;
    // A hook that exits early may leave children behind in its group; none may outlive it.
    killGroup();
    return {
      code: timedOut ? null : ended.code,
      stdout: out.text,
      stderr: err.text,
      timedOut,
      truncated: out.cut || err.cut,
      seconds,
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(late);
  }
}

/** Reads a stream to its end, keeping the first `MAX_HOOK_OUTPUT` bytes. */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): Promise<{ text: string; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let cut = false;
  const reader = stream.getReader();
  const stop = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", stop, { once: true });
  while (true) {
    const { done, value: chunk } = await reader.read().catch(() => ({
      done: true,
      value: undefined,
    }));
    if (done || !chunk) break;
    if (kept >= MAX_HOOK_OUTPUT) {
      cut = true;
      continue;
    }
    const room = MAX_HOOK_OUTPUT - kept;
    if (chunk.length > room) cut = true;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    chunks.push(part);
    kept += part.length;
  }
  signal.removeEventListener("abort", stop);
  const all = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return { text: new TextDecoder().decode(all), cut };
}
