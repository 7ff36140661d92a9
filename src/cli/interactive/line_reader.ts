/**
 * The interactive prompt's input: node:readline on a terminal (line editing, the arrow keys walk a
 * history kept across sessions in Deft's state folder), plain lines otherwise. One input may span
 * lines: a trailing backslash continues it, and lines pasted at once arrive as one input.
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
  #history: string[];

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
      const line = await this.#next(current);
      if (line === null) return lines.length > 0 ? lines.join("\n") : null;
      if (this.terminal && line.endsWith("\\")) {
        lines.push(line.slice(0, -1));
        current = "… ";
        continue;
      }
      lines.push(line);
      if (this.terminal) {
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

  /** One answer line, not kept in the history; lines typed ahead are dropped first. */
  async ask(question: string): Promise<string | null> {
    this.#queue.length = 0;
    const line = await this.#next(question);
    if (this.terminal && line !== null) this.#forgetLast();
    return line;
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
    if (this.#closed) return Promise.resolve(null);
    if (this.terminal) {
      this.#rl.setPrompt(prompt);
      this.#rl.prompt();
    }
    return new Promise((resolve) => this.#waiting = resolve);
  }

  #push(line: string): void {
    if (this.#waiting) this.#deliver(line);
    else this.#queue.push(line);
  }

  #deliver(line: string | null): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
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
