/**
 * A long-lived `deft serve` or `deft mcp` child for tests that talk to it line by line: send a
 * line, wait (with a limit) for the next output line, close its input and wait for it to exit.
 */
import { deftFlags } from "../../scripts/deft_flags.ts";
import { denoDir, REPO_ROOT } from "./deft.ts";

/** A running server child. */
export class ServerProcess {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: string[] = [];
  #waiting?: () => void;
  #ended = false;
  #stderr = "";
  readonly #reading: Promise<void>;

  constructor(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...deftFlags(), `${REPO_ROOT}main.ts`, ...args],
      cwd: options.cwd,
      env: { NO_COLOR: "1", DENO_DIR: denoDir(), ...options.env },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reading = this.#read();
    const stderr = this.child.stderr;
    (async () => {
      for await (const chunk of stderr.pipeThrough(new TextDecoderStream())) {
        this.#stderr += chunk;
      }
    })();
  }

  /** What the server wrote to stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  async #read(): Promise<void> {
    let pending = "";
    for await (const chunk of this.child.stdout.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        this.#lines.push(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
      this.#waiting?.();
    }
    this.#ended = true;
    this.#waiting?.();
  }

  /** Writes `text` (a newline is added unless it ends with one). */
  async send(text: string | Uint8Array): Promise<void> {
    const bytes = typeof text === "string"
      ? new TextEncoder().encode(text.endsWith("\n") ? text : text + "\n")
      : text;
    await this.#writer.write(bytes);
  }

  /** Sends `value` as one JSON line. */
  sendJson(value: unknown): Promise<void> {
    return this.send(JSON.stringify(value));
  }

  /** The next output line parsed as JSON; throws after `ms` without one, or at end of output. */
  async next(ms = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    while (this.#lines.length === 0) {
      if (this.#ended) throw new Error(`the server ended its output; stderr:\n${this.#stderr}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no output line within ${ms} ms; stderr:\n${this.#stderr}`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#waiting = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
      this.#waiting = undefined;
    }
    return JSON.parse(this.#lines.shift()!);
  }

  /** Closes the server's input and waits (at most `ms`) for it to exit; returns its code. */
  async end(ms = 60_000): Promise<number> {
    await this.#writer.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the server did not exit within ${ms} ms of its input ending`)),
        ms,
      );
    });
    try {
      const status = await Promise.race([this.child.status, timeout]);
      await this.#reading;
      return status.code;
    } catch (e) {
      this.child.kill("SIGKILL");
      await this.child.status;
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }
}
