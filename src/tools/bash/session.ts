/**
 * One persistent bash process and the commands run in it. The session starts bash (inside the
 * sandbox when asked), runs commands one at a time and knows how each ended: completed with an
 * exit status, timed out (the command is interrupted as with Ctrl-C, then its processes are
 * killed, and if the shell still does not come back the whole session is stopped), or ended with
 * the shell itself. It never decides what the model sees; the tool does that.
 */
import { reportChild } from "../worker_scope.ts";
import { join } from "node:path";
import { bwrapNotFound } from "../../policy/sandbox.ts";
import { type ProcessPolicy, shellLaunch, spawnChild } from "../../policy/process.ts";
import { type CapturedOutput, OutputCapture } from "./output_capture.ts";
import { type Reaper, signalSession, startReaper } from "./processes.ts";
import {
  CALL_TAG,
  commandBytes,
  initScript,
  newMarkerTag,
  parseMarker,
  randomHex,
  RUN_FILE_TEXT,
  SESSION_TAG,
  tidyMessages,
} from "./protocol.ts";
import { StreamPump } from "./stream_pump.ts";

/** How a session is started. */
export interface SessionOptions {
  /** What the shell may do: its sandbox, network and environment (policy/process.ts). */
  policy: ProcessPolicy;
  /** Where the shell starts; must exist. */
  cwd: string;
  /** Directory for saved full outputs; visible (read-only) inside the sandbox. */
  outputDir: string;
  /** Characters per stream shown before clipping. */
  outputLimit: number;
}

/** How a command ended. */
export type RunEnd =
  /** The shell printed the end marker; `status` is the command's exit status. */
  | "completed"
  /** The timeout fired; the command was interrupted and the shell is still usable. */
  | "timed-out"
  /** The timeout fired and the shell could not be interrupted, so the session was stopped. */
  | "timed-out-stopped"
  /** The shell exited (`exit`, a signal, `set -e`) or the session was closed. */
  | "shell-ended";

/** The result of one command. */
export interface RunResult {
  end: RunEnd;
  /** Exit status: the command's, or the shell's when it ended (128 + n for signal n). */
  status: number;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
}

/** The session could not start; the message says why (e.g. the sandbox failed). */
export class SessionStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionStartError";
  }
}

// The call tag of the shell itself; commands are numbered from 1.
const SHELL_CALL = "0";
const START_TIMEOUT_MS = 15_000;
// After a timeout interrupts a command (SIGINT, like Ctrl-C), how long it gets to wind down.
const INTERRUPT_GRACE_MS = 1_000;
// After the command's processes are killed outright, how long the shell gets to print its marker.
const KILL_GRACE_MS = 500;
// After the shell is gone, how long stray holders of the pipes get before reads are cancelled.
const DRAIN_GRACE_MS = 1_000;
// setTimeout's largest delay; longer ones fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A running bash process. Create with `BashSession.start`; call `run` one command at a time. */
export class BashSession {
  readonly #options: SessionOptions;
  readonly #child: Deno.ChildProcess;
  readonly #stdin: WritableStreamDefaultWriter<Uint8Array>;
  readonly #stdout: StreamPump;
  readonly #stderr: StreamPump;
  readonly #tag: { name: string; value: string };
  readonly #runFile: string;
  readonly #status: Promise<Deno.CommandStatus>;
  /** True when bwrap or unshare (a sandbox or a PID namespace) stands between us and the shell. */
  readonly #wrapped: boolean;
  /** Who waits for the shell to end, this call only (see `#whenEnded`). */
  readonly #endWaiters = new Set<() => void>();
  #exit: Deno.CommandStatus | null = null;
  #cwd: string;
  #calls = 0;
  #busy = false;
  #stopping: Promise<void> | null = null;
  /** Ends the session's processes should this code never get to (an unwrapped shell only). */
  readonly #reaper?: Reaper;

  private constructor(
    options: SessionOptions,
    child: Deno.ChildProcess,
    id: string,
    tag: string,
    runFile: string,
    wrapped: boolean,
  ) {
    this.#wrapped = wrapped;
    // Inside bwrap or unshare, the namespace ends everything with the shell.
    if (!wrapped) this.#reaper = startReaper(child.pid, { name: SESSION_TAG, value: id });
    this.#options = options;
    this.#child = child;
    this.#tag = { name: SESSION_TAG, value: id };
    this.#runFile = runFile;
    this.#cwd = options.cwd;
    this.#stdin = child.stdin.getWriter();
    this.#stdout = new StreamPump(child.stdout, tag);
    this.#stderr = new StreamPump(child.stderr, tag);
    this.#status = child.status.then((status) => {
      const exit = wrapped ? signalFromCode(status) : status;
      this.#exit = exit;
      for (const wake of this.#endWaiters) wake();
      this.#endWaiters.clear();
      return exit;
    });
  }

  /**
   * Starts bash in `options.cwd` and waits until it is ready. Throws `SandboxUnavailableError`
   * when the sandbox is asked for but bwrap is missing, and `SessionStartError` when the shell
   * (or the sandbox around it) dies before it is ready.
   */
  static async start(options: SessionOptions): Promise<BashSession> {
    const id = randomHex(8);
    const tag = newMarkerTag();
    const runFile = join(options.outputDir, "run");
    await Deno.writeTextFile(runFile, RUN_FILE_TEXT);
    const { policy } = options;
    // Call 0 is the shell itself (and its forked subshells): each call exports its number.
    const launch = shellLaunch(policy, {
      cwd: options.cwd,
      visible: [options.outputDir],
      env: { [SESSION_TAG]: id, [CALL_TAG]: SHELL_CALL },
    });
    const program = launch.program;
    let child: Deno.ChildProcess;
    try {
      // A new session and process group: no controlling terminal to prompt on (ssh, sudo fail
      // at once instead of waiting), and one group to kill.
      child = spawnChild(launch, { stdin: "piped", detached: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      if (policy.sandbox !== "none") throw bwrapNotFound(program);
      throw new SessionStartError(
        `Cannot start the shell: ${program} or the directory ${options.cwd} was not found.`,
      );
    }
    reportChild(child);
    const session = new BashSession(options, child, id, tag, runFile, program !== "bash");
    await session.#handshake(tag);
    return session;
  }

  /** False once the shell has exited or the session was stopped. */
  get alive(): boolean {
    return this.#exit === null && this.#stopping === null;
  }

  /** The shell's working directory after the last completed command. */
  get cwd(): string {
    return this.#cwd;
  }

  /** The variable every process of this session carries (its background shells' too). */
  get tag(): { name: string; value: string } {
    return this.#tag;
  }

  /** Resolves once the shell has exited (stopped, or ended on its own). */
  get ended(): Promise<unknown> {
    return this.#status;
  }

  /** How the shell ended, once it has. */
  get exitStatus(): Deno.CommandStatus | null {
    return this.#exit;
  }

  /**
   * Runs `command` and resolves when it ends, however it ends. `timeoutMs` bounds the wait;
   * `callNumber` names the files a clipped output is saved to.
   */
  async run(
    command: string,
    timeoutMs: number,
    callNumber: number,
    traceparent?: string,
  ): Promise<RunResult> {
    if (this.#busy) throw new Error("BashSession.run called while a command is running");
    if (!this.alive) throw new Error("BashSession.run called on a session that has ended");
    this.#busy = true;
    const call = ++this.#calls;
    const stdout = this.#capture("stdout", callNumber);
    const stderr = this.#capture("stderr", callNumber);
    const markers = Promise.all([this.#stdout.begin(stdout), this.#stderr.begin(stderr)]);
    // Both markers, or the end of a pipe (null): the shell is gone.
    const finished = markers.then(([out, err]) => out !== null && err !== null ? "done" : "ended");
    const timeout = timer(Math.min(timeoutMs, MAX_TIMER_MS), "timeout" as const);
    const shellEnded = this.#whenEnded();
    try {
      // With tracing on, the command sees its tool span as TRACEPARENT.
      const env: Record<string, string> = traceparent ? { TRACEPARENT: traceparent } : {};
      const sent = this.#stdin.write(commandBytes(command, call, env)).then(
        () => true,
        () => false,
      );
      const first = await Promise.race([
        finished,
        shellEnded.promise,
        sent.then((ok) => ok ? new Promise<never>(() => {}) : "ended" as const),
        timeout.promise,
      ]);
      let end: RunEnd;
      if (first === "timeout") {
        end = await this.#interrupt(call, finished);
      } else {
        end = first === "ended" ? "shell-ended" : "completed";
      }
      if (end !== "completed" && end !== "timed-out") await this.stop();
      const [outMarker] = await markers;
      const marker = outMarker === null ? null : parseMarker(outMarker);
      if (marker && marker.cwd !== "") this.#cwd = marker.cwd;
      const [out, err] = await Promise.all([stdout.finish(), stderr.finish()]);
      out.text = tidyMessages(out.text, this.#runFile);
      err.text = tidyMessages(err.text, this.#runFile);
      return {
        end,
        status: end === "completed" && marker ? marker.status : this.#endStatus(),
        stdout: out,
        stderr: err,
      };
    } finally {
      timeout.cancel();
      shellEnded.release();
      this.#busy = false;
    }
  }

  /**
   * Kills the shell and every process it started (its process group, and any process carrying
   * the session's tag), then waits until the pipes are released. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    await signalSession({
      signal: "KILL",
      session: this.#tag,
      calls: "all",
      groups: [this.#child.pid],
      rounds: 3,
    });
    // The helper may have been unable to run; this needs no permission. Inside the sandbox,
    // bwrap going takes everything in it along.
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await this.#status;
    await this.#reaper?.stop();
    // Abort rather than close: a write still queued for the dead shell must not hold us up.
    await this.#stdin.abort().catch(() => {});
    const drained = Promise.all([this.#stdout.ended, this.#stderr.ended]);
    const late = timer(DRAIN_GRACE_MS, "late" as const);
    if (await Promise.race([drained, late.promise]) === "late") {
      // Something outside our reach (e.g. it cleared its environment and left the group)
      // still holds a pipe; stop reading rather than wait for it.
      this.#stdout.cancel();
      this.#stderr.cancel();
      await drained;
    }
    late.cancel();
  }

  /**
   * Ends a command that ran out of time, gently first: SIGINT, as Ctrl-C at a terminal, to the
   * shell and this call's processes. Then SIGKILL to every process this call started, and SIGINT
   * to the shell again (if a child caught the first SIGINT, bash ignored its own). Resolves
   * `timed-out-stopped` when the shell itself cannot be brought back.
   */
  async #interrupt(call: number, finished: Promise<"done" | "ended">): Promise<RunEnd> {
    const callTag = String(call);
    await this.#sigint([SHELL_CALL, callTag]);
    const outcome = await this.#settle(finished, INTERRUPT_GRACE_MS);
    if (outcome) return outcome === "done" ? "timed-out" : "timed-out-stopped";
    await signalSession({
      signal: "KILL",
      session: this.#tag,
      calls: { name: CALL_TAG, values: [callTag] },
      rounds: 3,
    });
    await this.#sigint([SHELL_CALL]);
    return await this.#settle(finished, KILL_GRACE_MS) === "done"
      ? "timed-out"
      : "timed-out-stopped";
  }

  /**
   * SIGINT to the session's processes started by `calls`. Call 0 is the shell and its forked
   * subshells (they have not exec'd since). Background jobs of earlier calls are left alone:
   * they may handle SIGINT and would shut down. The bwrap we started is left alone too, or the
   * whole sandbox would go; the sandbox's init ignores signals it has no handler for.
   */
  async #sigint(calls: string[]): Promise<void> {
    await signalSession({
      signal: "INT",
      session: this.#tag,
      calls: { name: CALL_TAG, values: calls },
      exclude: this.#wrapped ? [this.#child.pid] : [],
    });
  }

  /**
   * A promise of this call's own that resolves when the shell ends. Racing the long-lived status
   * promise directly would hang a reaction on it per call, each holding that call's whole state
   * until the shell ends: a long session would keep something of every command.
   */
  #whenEnded(): { promise: Promise<"ended">; release: () => void } {
    if (this.#exit) return { promise: Promise.resolve("ended"), release: () => {} };
    let wake!: () => void;
    const promise = new Promise<"ended">((resolve) => {
      wake = () => resolve("ended");
      this.#endWaiters.add(wake);
    });
    return { promise, release: () => this.#endWaiters.delete(wake) };
  }

  async #settle(
    finished: Promise<"done" | "ended">,
    ms: number,
  ): Promise<"done" | "ended" | null> {
    const grace = timer(ms, null);
    const shellEnded = this.#whenEnded();
    const outcome = await Promise.race([finished, shellEnded.promise, grace.promise]);
    grace.cancel();
    shellEnded.release();
    return outcome;
  }

  async #handshake(tag: string): Promise<void> {
    const stdout = this.#capture("stdout", 0);
    const stderr = this.#capture("stderr", 0);
    const markers = Promise.all([this.#stdout.begin(stdout), this.#stderr.begin(stderr)]);
    const late = timer(START_TIMEOUT_MS, "late" as const);
    await this.#stdin.write(new TextEncoder().encode(initScript(tag, this.#runFile)))
      .catch(() => {});
    const shellEnded = this.#whenEnded();
    const first = await Promise.race([markers, shellEnded.promise, late.promise]);
    late.cancel();
    shellEnded.release();
    if (Array.isArray(first) && first[0] !== null && first[1] !== null) {
      const { cwd } = parseMarker(first[0]);
      if (cwd !== "") this.#cwd = cwd;
      stdout.discard();
      stderr.discard();
      return;
    }
    await this.stop();
    await markers;
    const [, err] = await Promise.all([stdout.finish(), stderr.finish()]);
    const why = first === "late"
      ? `it did not answer within ${START_TIMEOUT_MS / 1000} s`
      : `it exited with status ${this.#endStatus()}`;
    const detail = err.text.trim();
    const sandboxed = this.#options.policy.sandbox !== "none";
    throw new SessionStartError(
      `Cannot start the ${sandboxed ? "sandboxed " : ""}shell: ${why}.` +
        (detail ? `\n${detail}` : "") +
        (sandboxed
          ? "\nThe workspace-write sandbox needs working bubblewrap (user namespaces enabled)."
          : ""),
    );
  }

  #capture(label: "stdout" | "stderr", callNumber: number): OutputCapture {
    return new OutputCapture({
      label,
      limit: this.#options.outputLimit,
      savePath: join(this.#options.outputDir, `${callNumber}-${label}.txt`),
    });
  }

  #endStatus(): number {
    const exit = this.#exit;
    if (!exit) return -1;
    return exit.code;
  }
}

/** A promise that resolves to `value` after `ms`, unless cancelled first. */
function timer<T>(ms: number, value: T): { promise: Promise<T>; cancel(): void } {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<T>((resolve) => {
    handle = setTimeout(() => resolve(value), ms);
  });
  return { promise, cancel: () => clearTimeout(handle) };
}

const SIGNAL_NAMES: Readonly<Record<number, Deno.Signal>> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  6: "SIGABRT",
  9: "SIGKILL",
  11: "SIGSEGV",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
};

/**
 * bwrap reports a shell killed by signal n as exit status 128 + n; give the status its signal
 * back so messages say what happened (an explicit `exit 137` reads the same, rarely).
 */
function signalFromCode(status: Deno.CommandStatus): Deno.CommandStatus {
  const signal = SIGNAL_NAMES[status.code - 128];
  return status.signal || !signal ? status : { ...status, signal };
}
