/**
 * The interactive prompt's input: node:readline on a terminal (line editing, the arrow keys walk a
 * history kept across sessions in Deft's state folder), plain lines otherwise. One input may span
 * lines: a trailing backslash continues it, and lines pasted at once arrive as one input.
 *
 * While a turn runs (`busy`), what the user types is not echoed (the console owns the screen);
 * each line completed with Enter is queued, reported through `onQueued`, and returned by the next
 * `read`, one input per line. A question (`ask`) never takes a queued line: its answer must be
 * typed after the question is shown.
 */
import { createInterface, type Interface } from "node:readline";
import process from "node:process";
import { dirname } from "node:path";

/** Entries kept in the history file. */
const HISTORY_SIZE = 1000;
/** Lines arriving within this window of each other were pasted together. */
const PASTE_MS = 15;

/** Reads inputs and answers from the user. */
export class LineReader {
  readonly #rl: Interface;
  readonly #queue: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #closed = false;
  #onInterrupt: () => void = () => {};
  #onQueued: (line: string) => void = () => {};
  #history: string[];
  #busy = false;
  // A prompt is on screen (read or ask): what is typed is echoed even while busy.
  #prompting = false;

  private constructor(
    readonly terminal: boolean,
    private readonly historyFile: string | undefined,
    history: string[],
  ) {
    this.#history = history;
    this.#rl = createInterface({
      input: process.stdin,
      output: process.stderr,
      terminal,
      history: [...history].reverse(),
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
    });
    this.#rl.on("line", (line: string) => this.#push(line));
    this.#rl.on("close", () => {
      this.#closed = true;
      this.#deliver(null);
    });
    this.#rl.on("SIGINT", () => this.#onInterrupt());
    if (terminal) {
      // deno-lint-ignore no-explicit-any
      const rl = this.#rl as any;
      const write = rl._writeToOutput.bind(rl);
      rl._writeToOutput = (text: string) => {
        if (!this.#busy || this.#prompting) write(text);
      };
    }
  }

  /** Opens the reader; `historyFile` is read now and appended to as inputs arrive. */
  static async open(terminal: boolean, historyFile?: string): Promise<LineReader> {
    let history: string[] = [];
    if (historyFile && terminal) {
      try {
        history = parseHistory(await Deno.readTextFile(historyFile));
      } catch { /* no history yet, or unreadable: start empty */ }
    }
    return new LineReader(terminal, historyFile, history);
  }

  /** Called for Ctrl-C while the terminal is in raw mode (a signal otherwise). */
  set onInterrupt(handler: () => void) {
    this.#onInterrupt = handler;
  }

  /** Called with each line typed ahead while busy (on a terminal). */
  set onQueued(handler: (line: string) => void) {
    this.#onQueued = handler;
  }

  /** A turn runs: typed lines are queued, not echoed. */
  set busy(value: boolean) {
    this.#busy = value;
  }

  /** Drops the lines typed ahead; returns how many there were. */
  dropQueued(): number {
    const dropped = this.#queue.length;
    this.#queue.length = 0;
    return dropped;
  }

  /** Clears what is typed on the prompt line and shows the prompt again. */
  clearLine(): void {
    if (!this.terminal) return;
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    rl.line = "";
    rl.cursor = 0;
    process.stderr.write("\n");
    this.#rl.prompt();
  }

  /**
   * The next input (lines joined by newlines), or null at end of input. On a terminal, the
   * prompt is shown and the input goes into the history.
   */
  async read(prompt: string): Promise<string | null> {
    const lines: string[] = [];
    let current = prompt;
    for (;;) {
      const typedAhead = this.terminal && this.#queue.length > 0;
      const line = await this.#next(current);
      if (line === null) return lines.length > 0 ? lines.join("\n") : null;
      if (this.terminal && line.endsWith("\\")) {
        lines.push(line.slice(0, -1));
        current = "… ";
        continue;
      }
      // A line typed ahead was not echoed: show it at its prompt now that it is sent.
      if (typedAhead) process.stderr.write(`${current}${line}\n`);
      lines.push(line);
      // Each line typed ahead is an input of its own (each was shown as queued).
      if (this.terminal && !typedAhead) {
        // Lines pasted together arrive at once; take them as one input.
        await new Promise((r) => setTimeout(r, PASTE_MS));
        while (this.#queue.length > 0) lines.push(this.#queue.shift()!);
        if (lines.at(-1)!.endsWith("\\")) {
          lines[lines.length - 1] = lines.at(-1)!.slice(0, -1);
          current = "… ";
          continue;
        }
      }
      break;
    }
    const input = lines.join("\n");
    if (this.terminal && input.trim() !== "") await this.#remember(input);
    return input;
  }

  /**
   * One answer line, typed after the question is shown (lines typed ahead stay queued for the
   * prompt), not kept in the history.
   */
  async ask(question: string): Promise<string | null> {
    const line = await this.#wait(question);
    if (this.terminal && line !== null) this.#forgetLast();
    return line;
  }

  /**
   * Like `ask`, with the arrow keys walking `options` (the first is one press of ↑ away) instead
   * of the history; the answer is the typed text or the option brought up.
   */
  async choose(question: string, options: string[]): Promise<string | null> {
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    const history = rl.history;
    if (this.terminal) {
      rl.history = [...options];
      rl.historyIndex = -1;
    }
    try {
      return await this.#wait(question);
    } finally {
      if (this.terminal) {
        rl.history = history;
        rl.historyIndex = -1;
      }
    }
  }

  /** Wakes a pending read or ask with null (as at end of input). */
  cancelPending(): void {
    this.#deliver(null);
  }

  /** Stops reading. */
  close(): void {
    this.#rl.close();
  }

  #next(prompt: string): Promise<string | null> {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift()!);
    return this.#wait(prompt);
  }

  #wait(prompt: string): Promise<string | null> {
    if (this.#closed) return Promise.resolve(null);
    const answer = new Promise<string | null>((resolve) => this.#waiting = resolve);
    if (this.terminal) {
      this.#prompting = true;
      this.#rl.setPrompt(prompt);
      this.#rl.prompt();
    }
    return answer;
  }

  #push(line: string): void {
    if (this.#waiting) this.#deliver(line);
    else {
      this.#queue.push(line);
      if (this.terminal && this.#busy) this.#onQueued(line);
    }
  }

  #deliver(line: string | null): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    this.#prompting = false;
    waiting?.(line);
  }

  #forgetLast(): void {
    // deno-lint-ignore no-explicit-any
    const history = (this.#rl as any).history as string[] | undefined;
    history?.shift();
  }

  async #remember(input: string): Promise<void> {
    if (!this.historyFile) return;
    this.#history.push(input);
    try {
      await Deno.mkdir(dirname(this.historyFile), { recursive: true });
      if (this.#history.length > HISTORY_SIZE * 2) {
        this.#history = this.#history.slice(-HISTORY_SIZE);
        await Deno.writeTextFile(this.historyFile, this.#history.map(encode).join(""), {
          mode: 0o600,
        });
      } else {
        await Deno.writeTextFile(this.historyFile, encode(input), { append: true, mode: 0o600 });
      }
    } catch { /* history is a convenience; never fail a turn over it */ }
  }
}

// One JSON string per line, so inputs spanning lines stay whole.
function encode(input: string): string {
  return JSON.stringify(input) + "\n";
}

function parseHistory(text: string): string[] {
  const entries: string[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const value = JSON.parse(line);
      if (typeof value === "string") entries.push(value);
    } catch {
      entries.push(line);
    }
  }
  return entries.slice(-HISTORY_SIZE);
}
