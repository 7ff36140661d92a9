/** `bash`: commands in one persistent shell session per tool instance. */
import { processPolicy, unaskedPolicy } from "../../policy/process.ts";
import { BASH } from "./definition.ts";
import { type CallPlan, fail, Tool, type ToolExecResult } from "../base.ts";
import { SandboxUnavailableError } from "../../policy/sandbox.ts";
import { tempRoot } from "../../policy/dirs.ts";
import { backgroundShells } from "./background.ts";
import { SerialQueue } from "./serial_queue.ts";
import { BashSession, type RunResult, SessionStartError } from "./session.ts";

const DEFAULT_TIMEOUT_SECONDS = 120;
const DEFAULT_OUTPUT_LIMIT = 30_000;
// The exit status reported for a command that ran out of time, as with timeout(1).
const TIMEOUT_STATUS = 124;

// Said when a command run unasked fails, since the difference may be why.
const UNASKED_NOTE = "Note: this read-only command ran without asking the user, in a fresh " +
  "read-only sandbox (no network; the session's variables, functions and /tmp are not there).";

/** The bash tool. The session itself lives in `session.ts`. */
export class BashTool extends Tool {
  readonly name = BASH.name;
  readonly description = BASH.description;
  readonly parameters = BASH.parameters;

  readonly #queue = new SerialQueue();
  /** The session's background shells, shared with bash_output and kill_shell. */
  readonly #shells = backgroundShells(this.context);
  #session: BashSession | null = null;
  #outputDir: string | null = null;
  // The directory the next automatic restart starts in, and why there will be one.
  #cwd: string = this.context.workspace;
  #restartReason: string | null = null;
  #calls = 0;
  #closed = false;

  execute(args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    return this.#queue.run(() => this.#execute(args, plan));
  }

  /** Kills the shell and everything it started, and removes saved outputs. */
  override async close(): Promise<void> {
    this.#closed = true;
    // Stop at once, without waiting for a running command; it reports that the shell ended.
    await this.#session?.stop();
    await this.#queue.idle();
    await this.#session?.stop();
    this.#session = null;
    // Their processes ended with the shell; this waits until their pipes are read out.
    await this.#shells.closeAll("the bash tool was closed");
    if (this.#outputDir) {
      await Deno.remove(this.#outputDir, { recursive: true }).catch(() => {});
      this.#outputDir = null;
    }
  }

  async #execute(args: Record<string, unknown>, plan?: CallPlan): Promise<ToolExecResult> {
    if (this.#closed) return fail("The bash tool has been closed; no more commands can run.");
    if (args.restart === true) return await this.#restart();
    const command = args.command;
    if (typeof command !== "string" || command.trim() === "") {
      return fail(
        "No command provided for the bash tool. Pass `command`, or `restart: true` for a " +
          "fresh shell.",
      );
    }
    if (command.includes("\0")) {
      return fail("The command contains a NUL character, which bash cannot run. Remove it.");
    }
    const timeout = args.timeout ?? this.context.settings.bashTimeoutSeconds ??
      DEFAULT_TIMEOUT_SECONDS;
    if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0) {
      return fail(`Invalid \`timeout\`: ${timeout}. It must be a positive number of seconds.`);
    }

    const background = args.run_in_background === true;
    if (plan?.unasked === true) {
      // The catalog never lets a background command through unasked (it outlives the call).
      if (background) {
        return fail("A background command cannot run unasked; it was not run. Ask again.");
      }
      return await this.#runUnasked(command, timeout, plan.traceparent);
    }

    const notes: string[] = [];
    let session: BashSession;
    try {
      session = await this.#ensureSession(notes);
    } catch (e) {
      if (e instanceof SandboxUnavailableError || e instanceof SessionStartError) {
        return fail(e.message);
      }
      throw e;
    }
    if (background) return await this.#startBackground(session, command, notes, plan?.traceparent);
    const result = await session.run(command, timeout * 1000, ++this.#calls, plan?.traceparent);
    this.#cwd = session.cwd;
    return this.#report(result, timeout, notes);
  }

  /** Starts `command` as a background shell of `session` and answers with its id at once. */
  async #startBackground(
    session: BashSession,
    command: string,
    notes: string[],
    traceparent?: string,
  ): Promise<ToolExecResult> {
    const outcome = await this.#shells.start(
      session,
      command,
      this.#outputDir!,
      ++this.#calls,
      traceparent,
    );
    this.#cwd = session.cwd;
    if ("error" in outcome) {
      if (!session.alive) {
        this.#restartReason ??= "the previous shell ended while starting a background command";
        this.#session = null;
      }
      return fail(joinLines([...notes, outcome.error]));
    }
    const id = outcome.job.id;
    const output = `shell_id: ${id}\n` +
      `Started in the background in ${session.cwd}. Read its new output with bash_output ` +
      `{"shell_id": "${id}"} (add "filter" to pick lines); stop it with kill_shell. It ends ` +
      "when the session ends or this shell restarts.";
    const error = joinLines(notes);
    return { output, error: error === "" ? null : error, error_code: 0 };
  }

  /**
   * A command the approval gate let through without asking: run in a fresh shell in a read-only
   * sandbox (policy/process.ts `unaskedPolicy`), in the session's directory, and gone afterwards.
   * The session's variables, functions and aliases are not there, so a function planted under a
   * reader's name (`cat() { … }`) is not what runs.
   */
  async #runUnasked(
    command: string,
    timeout: number,
    traceparent?: string,
  ): Promise<ToolExecResult> {
    const settings = this.context.settings;
    const policy = unaskedPolicy(processPolicy(this.context.workspace, settings));
    let session: BashSession;
    try {
      this.#outputDir ??= await outputFolder(settings.tempDir);
      const options = {
        policy,
        cwd: this.#cwd,
        outputDir: this.#outputDir,
        outputLimit: settings.outputLimit ?? DEFAULT_OUTPUT_LIMIT,
      };
      session = await BashSession.start(options).catch((e) => {
        // The session's directory may not exist where this shell runs (its private /tmp).
        if (!(e instanceof SessionStartError) || this.#cwd === this.context.workspace) throw e;
        return BashSession.start({ ...options, cwd: this.context.workspace });
      });
    } catch (e) {
      if (e instanceof SandboxUnavailableError || e instanceof SessionStartError) {
        return fail(e.message);
      }
      throw e;
    }
    try {
      const result = await session.run(command, timeout * 1000, ++this.#calls, traceparent);
      const status = result.end === "completed" ? result.status : TIMEOUT_STATUS;
      const notes = result.end === "completed" ? [] : [
        `Command ${
          result.end === "shell-ended" ? "ended its shell" : `timed out after ${timeout} s`
        }.`,
      ];
      if (status !== 0) notes.push(UNASKED_NOTE);
      const error = joinLines([result.stderr.text, ...notes]);
      return { output: result.stdout.text, error: error === "" ? null : error, error_code: status };
    } finally {
      await session.stop();
    }
  }

  async #restart(): Promise<ToolExecResult> {
    await this.#session?.stop();
    this.#session = null;
    this.#cwd = this.context.workspace;
    this.#restartReason = null;
    try {
      await this.#ensureSession([]);
    } catch (e) {
      if (e instanceof SandboxUnavailableError || e instanceof SessionStartError) {
        return fail(e.message);
      }
      throw e;
    }
    return { output: "tool has been restarted.", error: null, error_code: 0 };
  }

  /** The live session, starting one (and saying why in `notes`) when there is none. */
  async #ensureSession(notes: string[]): Promise<BashSession> {
    if (this.#session?.alive) return this.#session;
    if (this.#session) {
      // It died between calls (e.g. a background `kill $$`).
      await this.#session.stop();
      this.#restartReason ??= `the previous shell ${describeExit(this.#session.exitStatus)}`;
      this.#session = null;
    }
    const settings = this.context.settings;
    // Inside the session's private temp folder: the worker may not write the system one.
    this.#outputDir ??= await outputFolder(settings.tempDir);
    let cwd = this.#cwd;
    if (!(await mayBeDirectory(cwd))) {
      if (this.#restartReason) notes.push(`${cwd} no longer exists.`);
      cwd = this.context.workspace;
    }
    const options = {
      policy: processPolicy(this.context.workspace, settings),
      cwd,
      outputDir: this.#outputDir,
      outputLimit: settings.outputLimit ?? DEFAULT_OUTPUT_LIMIT,
    };
    try {
      this.#session = await BashSession.start(options);
    } catch (e) {
      // The old directory may not exist where the shell runs (e.g. the sandbox's private /tmp).
      if (!(e instanceof SessionStartError) || cwd === this.context.workspace) throw e;
      notes.push(`Could not start in ${cwd}; starting in the workspace instead.`);
      this.#session = await BashSession.start({ ...options, cwd: this.context.workspace });
    }
    if (this.#closed) {
      await this.#session.stop();
      throw new SessionStartError("The bash tool has been closed; no more commands can run.");
    }
    if (this.#restartReason) {
      notes.push(
        `Note: this is a fresh shell in ${this.#session.cwd}, because ${this.#restartReason}. ` +
          "Variables, functions, aliases and background jobs from before are gone.",
      );
      this.#restartReason = null;
    }
    return this.#session;
  }

  #report(result: RunResult, timeout: number, notes: string[]): ToolExecResult {
    const seconds = `${timeout} s`;
    const exit = describeExit(this.#session?.exitStatus);
    let status = result.status;
    let ending: string | null = null;
    switch (result.end) {
      case "completed":
        break;
      case "timed-out":
        status = TIMEOUT_STATUS;
        ending = `Command timed out after ${seconds} and was stopped (as with Ctrl-C); the ` +
          "output shown is what it printed until then. The shell is still usable and keeps its " +
          "state. Run long jobs with `run_in_background: true` (read them with bash_output) or " +
          "pass a larger `timeout`.";
        break;
      case "timed-out-stopped":
        status = TIMEOUT_STATUS;
        this.#restartReason = `the previous command timed out after ${seconds}`;
        ending = `Command timed out after ${seconds}; the output shown is what it printed until ` +
          "then. The shell could not be brought back to a prompt (the command was running " +
          "inside a function or a nested script, or ignored interrupts), so it was stopped with " +
          `everything it started. The next call starts a fresh shell in ${this.#cwd}.`;
        break;
      case "shell-ended":
        if (this.#closed) {
          ending = "The shell was stopped because the bash tool was closed.";
          break;
        }
        this.#restartReason = `the previous shell ${exit}`;
        ending = `The shell ${exit}; this happens on \`exit\`, on an error under \`set -e\` ` +
          "or `set -u`, or on a signal. Everything it started was stopped. The next call starts " +
          `a fresh shell in ${this.#cwd}.`;
        break;
    }
    if (result.end !== "completed" && result.end !== "timed-out") this.#session = null;
    const error = joinLines([...notes, result.stderr.text, ...(ending ? [ending] : [])]);
    return { output: result.stdout.text, error: error === "" ? null : error, error_code: status };
  }
}

/** Joins non-empty texts, each starting on its own line. */
function joinLines(texts: string[]): string {
  let joined = "";
  for (const text of texts) {
    if (text === "") continue;
    if (joined !== "" && !joined.endsWith("\n")) joined += "\n";
    joined += text;
  }
  return joined;
}

function describeExit(status: Deno.CommandStatus | null | undefined): string {
  if (!status) return "ended";
  if (status.signal) return `was killed by ${status.signal} (exit status ${status.code})`;
  return `exited with status ${status.code}`;
}

/** False only when `path` is known not to be a directory (the tool host may not let us look). */
async function mayBeDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (e) {
    return e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied;
  }
}

async function outputFolder(dir: string | undefined): Promise<string> {
  try {
    return await Deno.makeTempDir({ dir, prefix: "deft-bash-" });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable) || dir) throw e;
    throw new SandboxUnavailableError(
      `bash needs a private temp folder, and Deft may write neither the system temp folder nor ` +
        `its cache: start Deft with --allow-write=${tempRoot()} (tools get only a private ` +
        `0700 folder in it).`,
    );
  }
}
