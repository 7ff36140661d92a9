/**
 * Background shells: commands the bash tool starts with `run_in_background`. Each runs in a
 * subshell of the session shell (protocol.ts `backgroundCommand`), so it has the same sandbox,
 * network, environment, working directory and private /tmp as the commands after it, and it ends
 * with that shell: on its restart, on the tool's close (the session's end, Ctrl-C, a signal to
 * Deft), with everything the shell's sandbox or PID namespace holds. Its output and exit status
 * come back through two named pipes in the tool's private output folder, which the sandbox shows
 * read-only (a pipe can be written through a read-only mount): the output into a bounded buffer,
 * read by `bash_output` as what is new since the last read; `kill_shell` kills it and its group.
 *
 * The shells of one tool context (one session's tools) share one registry (`backgroundShells`),
 * so `bash_output` and `kill_shell` find what `bash` started, and an id from another session is
 * unknown here. Ids are random (96 bits): nobody guesses one.
 */
import { join } from "node:path";
import { AnsiStripper } from "./ansi.ts";
import { OutputRing } from "./output_ring.ts";
import { makeFifos, signalJob } from "./processes.ts";
import { backgroundCommand, JOB_TAG, type JobPipes, randomHex } from "./protocol.ts";
import type { BashSession, RunResult } from "./session.ts";

/** Background shells that may run at once in one session. */
export const MAX_RUNNING = 16;
/** Unread output kept per background shell, in bytes; older bytes are dropped first. */
export const OUTPUT_BYTES = 1 << 20;
// Ended shells remembered (their id gets a clear answer); the oldest are forgotten first.
const MAX_REMEMBERED = 256;
/**
 * Ended shells whose unread output is kept; older ones' is dropped (and said), so the output held
 * is at most (MAX_RUNNING + KEPT_OUTPUTS) × OUTPUT_BYTES however many shells a session starts.
 */
export const KEPT_OUTPUTS = 16;
// Starting one takes a moment of the session shell; more means the shell is stuck.
const LAUNCH_TIMEOUT_MS = 30_000;
// After a kill, how long the output pipe's last holders get to go before reads are left behind.
const DRAIN_GRACE_MS = 2_000;
// A pipe holds 64 KiB by default: one read takes what is there.
const READ_BYTES = 64 * 1024;
// An exit status is at most three digits; a longer text is not one.
const STATUS_BYTES = 16;

/** Where a background shell is: running, exited on its own, or killed. */
export type JobState = "running" | "exited" | "killed";

/** What one `bash_output` read returns. */
export interface JobRead {
  /** The new output (matching lines only, with a filter), escape sequences removed. */
  text: string;
  /** Bytes that were dropped before this read because more arrived than the buffer keeps. */
  droppedBytes: number;
  /** Characters of this read left out because it was longer than the limit (the oldest). */
  hiddenChars: number;
  /** Lines the filter left out. */
  filteredLines: number;
  state: JobState;
  exitCode: number | null;
  /** Why it was killed. */
  why: string;
}

/** One background shell. */
export class BackgroundJob {
  readonly startedAt = new Date();
  readonly #session: BashSession;
  readonly #pipes: JobPipes;
  readonly #ring = new OutputRing(OUTPUT_BYTES);
  readonly #decoder = new TextDecoder();
  readonly #ansi = new AnsiStripper();
  readonly #done: Promise<unknown>;
  #state: JobState = "running";
  #exitCode: number | null = null;
  #why = "";
  /** The job's process group in the shell's PID namespace, once started. */
  #group = 0;
  #outputEnded = false;

  constructor(
    readonly id: string,
    readonly command: string,
    session: BashSession,
    pipes: JobPipes,
  ) {
    this.#session = session;
    this.#pipes = pipes;
    const output = this.#pump();
    const status = this.#readStatus();
    this.#done = Promise.all([output, status]).then(() => this.#removePipes());
    session.ended.then(() => this.#shellEnded());
  }

  get state(): JobState {
    return this.#state;
  }

  get exitCode(): number | null {
    return this.#exitCode;
  }

  /** Why it was killed (empty while it was not). */
  get why(): string {
    return this.#why;
  }

  /** Bytes of output not read yet. */
  get unreadBytes(): number {
    return this.#ring.size;
  }

  /** Kills the job and all it started; `why` is what the model is told. Never throws. */
  async kill(why: string): Promise<void> {
    const group = this.#state === "running" ? this.#group : 0;
    if (this.#state === "running") {
      this.#state = "killed";
      this.#why = why;
    }
    await signalJob({ session: this.#session.tag, job: { name: JOB_TAG, value: this.id }, group });
    await this.#release();
  }

  /**
   * The output since the last read, at most `limit` characters (the newest), and the state.
   * With `filter`, only the lines it matches; a line still being written waits for its end.
   */
  read(filter: RegExp | undefined, limit: number): JobRead {
    const ended = this.#outputEnded;
    let { bytes, dropped } = this.#ring.take();
    if (filter && !ended) {
      const lastBreak = bytes.lastIndexOf(0x0a);
      this.#ring.unshift(bytes.subarray(lastBreak + 1));
      bytes = bytes.subarray(0, lastBreak + 1);
    }
    let text = this.#ansi.push(this.#decoder.decode(bytes, { stream: !ended }));
    if (ended) text += this.#ansi.flush();
    let filteredLines = 0;
    if (filter) {
      const lines = text.split("\n");
      if (lines.at(-1) === "") lines.pop();
      const kept = lines.filter((line) => filter.test(line));
      filteredLines = lines.length - kept.length;
      text = kept.map((line) => `${line}\n`).join("");
    }
    let hiddenChars = 0;
    if (text.length > limit) {
      let cut = text.length - limit;
      // Start at a line's start when one is near; never inside a surrogate pair.
      const lineStart = text.indexOf("\n", cut);
      if (lineStart >= 0 && lineStart - cut < limit / 4) cut = lineStart + 1;
      else if (isLowSurrogate(text.charCodeAt(cut))) cut++;
      hiddenChars = cut;
      text = text.slice(cut);
    }
    return {
      text,
      droppedBytes: dropped,
      hiddenChars,
      filteredLines,
      state: this.#state,
      exitCode: this.#exitCode,
      why: this.#why,
    };
  }

  /** Drops the unread output (an old ended shell's); the next read says how much. */
  dropOutput(): void {
    this.#ring.dropAll();
  }

  /** The job is running under `group` (its process group in the shell's PID namespace). */
  started(group: number): void {
    this.#group = group;
  }

  /** Reads the output pipe into the buffer until every writer has closed it. */
  async #pump(): Promise<void> {
    try {
      const file = await Deno.open(this.#pipes.output, { read: true });
      // One buffer for every read: a shell printing fast makes no garbage here.
      const chunk = new Uint8Array(READ_BYTES);
      try {
        while (true) {
          const n = await file.read(chunk);
          if (n === null) break;
          this.#ring.push(chunk.subarray(0, n));
        }
      } finally {
        file.close();
      }
    } catch {
      // The pipe is gone (the folder was removed): nothing more will come.
    }
    this.#outputEnded = true;
  }

  /** Reads the exit status the job's subshell writes when its command ends. */
  async #readStatus(): Promise<void> {
    const buffer = new Uint8Array(STATUS_BYTES);
    let got = 0;
    try {
      const file = await Deno.open(this.#pipes.status, { read: true });
      try {
        while (got < buffer.length) {
          const n = await file.read(buffer.subarray(got));
          if (n === null) break;
          got += n;
        }
      } finally {
        file.close();
      }
    } catch {
      return;
    }
    const text = new TextDecoder().decode(buffer.subarray(0, got));
    if (!/^\d{1,3}$/.test(text) || this.#state !== "running") return;
    this.#state = "exited";
    this.#exitCode = Number(text);
  }

  #shellEnded(): void {
    if (this.#state === "running") {
      this.#state = "killed";
      this.#why = "the shell it ran in ended (a restart, a timeout that stopped the shell, " +
        "`exit`, or the bash tool was closed), and everything it started ended with it";
    }
    void this.#release();
  }

  /**
   * Lets the readers finish: a reader still waiting for its pipe's first writer (a job that never
   * started, a status never written) is given one that closes at once, so it reads the end.
   * Waits a little for the output's last holders; what outlives that is left to the shell's end.
   */
  async #release(): Promise<void> {
    await Promise.all([nudge(this.#pipes.output), nudge(this.#pipes.status)]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => timer = setTimeout(resolve, DRAIN_GRACE_MS));
    await Promise.race([this.#done, late]);
    clearTimeout(timer);
  }

  async #removePipes(): Promise<void> {
    for (const path of [this.#pipes.output, this.#pipes.status]) {
      await Deno.remove(path).catch(() => {});
    }
  }
}

/** How a start went: the job, or why there is none (with the launch's result, if it ran). */
export type StartOutcome =
  | { job: BackgroundJob }
  | { error: string; result?: RunResult };

/** The background shells of one session's tools. */
export class BackgroundShells {
  readonly #jobs = new Map<string, BackgroundJob>();

  /** Every shell remembered, oldest first. */
  all(): BackgroundJob[] {
    return [...this.#jobs.values()];
  }

  /** The shells still running, oldest first. */
  running(): BackgroundJob[] {
    return [...this.#jobs.values()].filter((job) => job.state === "running");
  }

  /** The shell with this id, if this session started it (and has not forgotten it). */
  find(id: string): BackgroundJob | undefined {
    return this.#jobs.get(id);
  }

  /**
   * Starts `command` as a background shell in `session` (which must be idle: the caller holds
   * the tool's queue), its pipes in `outputDir`.
   */
  async start(
    session: BashSession,
    command: string,
    outputDir: string,
    callNumber: number,
    traceparent?: string,
  ): Promise<StartOutcome> {
    const running = this.running();
    if (running.length >= MAX_RUNNING) {
      return {
        error: `${running.length} background shells are running already, the most one session ` +
          `may run at once. Stop one you no longer need with kill_shell (running: ` +
          `${running.map((job) => job.id).join(", ")}), or run this command in the foreground.`,
      };
    }
    const id = `bg-${randomHex(12)}`;
    const pipes = { output: join(outputDir, `${id}.out`), status: join(outputDir, `${id}.status`) };
    try {
      await makeFifos([pipes.output, pipes.status]);
    } catch (e) {
      return { error: `The background shell was not started: ${(e as Error).message}` };
    }
    const job = new BackgroundJob(id, command, session, pipes);
    this.#jobs.set(id, job);
    const result = await session.run(
      backgroundCommand(command, id, pipes),
      LAUNCH_TIMEOUT_MS,
      callNumber,
      traceparent,
    );
    const group = Number(result.stdout.text.trim().split("\n").at(-1));
    if (result.end !== "completed" || !Number.isSafeInteger(group) || group <= 1) {
      await job.kill("it could not be started");
      this.#jobs.delete(id);
      const detail = result.stderr.text.trim();
      return {
        error: "The background shell could not be started in the session's shell" +
          (result.end === "completed" ? "" : " (the shell did not answer or ended)") +
          (detail ? `:\n${detail}` : "."),
        result,
      };
    }
    job.started(group);
    this.#forgetOld();
    return { job };
  }

  /**
   * Kills the running shells started after `since` (a rewind took back the turns that started
   * them); returns them. The others run on. Never throws.
   */
  async killStartedAfter(since: Date, why: string): Promise<BackgroundJob[]> {
    const taken = this.running().filter((job) => job.startedAt.getTime() > since.getTime());
    await Promise.all(taken.map((job) => job.kill(why)));
    return taken;
  }

  /** Kills every running shell (the tool is closing). Never throws. */
  async closeAll(why: string): Promise<void> {
    await Promise.all(this.running().map((job) => job.kill(why)));
  }

  #forgetOld(): void {
    const ended = [...this.#jobs.values()].filter((job) => job.state !== "running");
    for (const job of ended.slice(0, -KEPT_OUTPUTS)) job.dropOutput();
    for (const job of ended.slice(0, Math.max(0, this.#jobs.size - MAX_REMEMBERED))) {
      this.#jobs.delete(job.id);
    }
  }
}

const registries = new WeakMap<object, BackgroundShells>();

/** The background shells of the tools built with `context` (one session's tools). */
export function backgroundShells(context: object): BackgroundShells {
  let shells = registries.get(context);
  if (!shells) {
    shells = new BackgroundShells();
    registries.set(context, shells);
  }
  return shells;
}

/** Opens and closes `path` (a named pipe) for reading and writing, which never blocks. */
async function nudge(path: string): Promise<void> {
  try {
    (await Deno.open(path, { read: true, write: true })).close();
  } catch {
    // Gone already: its readers are done.
  }
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
