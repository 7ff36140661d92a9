/**
 * The interactive prompt's input: node:readline on a terminal (line editing, the arrow keys walk a
 * history kept across sessions in Deft's state folder), plain lines otherwise. One input may span
 * lines: Alt-Enter or Ctrl-J puts a newline in it, a trailing backslash continues it, and lines
 * pasted at once arrive as one input.
 *
 * On a terminal the reader turns on bracketed paste (and off again when it closes or the process
 * exits): a paste of any size is held in the composer, its newlines never send it; a paste of more
 * than one line is shown folded as `[pasted N lines]` and sent whole on Enter. A paste while a
 * question is asked never answers it: it waits for the next prompt. Esc while a turn runs stops it
 * as Ctrl-C does (a lone Esc; arrow keys and other sequences are told apart by the decoder).
 * Ctrl-R brings back the newest earlier input holding what is typed (again: older ones).
 *
 * While a turn runs (`busy`), what the user types is drawn as a composer line (`next> …`) under
 * the live output (console/screen.ts: erased before each output chunk and drawn again after it,
 * never mixed into it), editable with the usual keys;
 * each line completed with Enter is queued, reported through `onQueued`, and returned by the next
 * `read`, one input per line. A question (`ask`) never takes a queued line: its answer must be
 * typed after the question is shown.
 */
import { createInterface, type Interface } from "node:readline";
import process from "node:process";
import { HISTORY_SIZE, readHistory, rememberInput } from "./history_file.ts";
import { fitComposer, screen, screenHeight, screenWidth } from "../console/screen.ts";
import { printable } from "../console/printable.ts";
import { terminalLine } from "../../policy/terminal_text.ts";
import { RowMenu } from "./row_menu.ts";

/** Lines arriving within this window of each other were pasted together. */
const PASTE_MS = 15;
/** Terminal sequences: bracketed paste on and off. */
const PASTE_ON = "\x1b[?2004h";
const PASTE_OFF = "\x1b[?2004l";
/** A one-line paste up to this many characters is put on the line as it is, not folded. */
const FOLD_CHARS = 200;
/** The prompt of the composer line drawn under a running turn's output. */
const NEXT_PROMPT = "next> ";

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
  // A question (ask/choose) is on screen: a paste is held for the next prompt.
  #asking = false;
  #onEscape: (double: boolean) => void = () => {};
  // `select`: the mark over the rows above the question.
  #menu: RowMenu | undefined;
  // Ctrl-R: what is searched for, where in the history (newest first) to look next, and the
  // prompt and line from before the search.
  #search: { query: string; from: number; prompt: string; line: string } | undefined;
  #complete: (line: string) => Promise<[string[], string]> = (line) => Promise.resolve([[], line]);
  // Bracketed paste: inside a paste, its text so far; the '~' ending a marker is skipped.
  #paste: string | undefined;
  #skipTilde = false;
  // Folded pastes on the line being composed: the placeholder shown, and the text it stands for.
  readonly #folded = new Map<string, string>();
  #pastes = 0;
  // What was on the composer line when a question came up, and pastes made during the question.
  #held = "";
  #pasteOn = false;
  readonly #pasteOff = () => this.#bracketedPaste(false);

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
      // An earlier input holding escapes or control bytes (a paste) is kept in the file but
      // never brought back with Up or Ctrl-R: readline would draw it raw, and the terminal obey.
      history: history.filter((entry) => printable(entry) === entry).reverse(),
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
      completer: terminal
        ? (line: string, done: (err: null, answer: [string[], string]) => void) => {
          // A file name may hold escapes or control bytes: readline draws what it inserts as it
          // is, so the candidates are shown spelled out and the real names come back on Enter.
          this.#complete(this.#unfoldKept(line)).then(
            ([candidates, part]) =>
              done(null, [candidates.map((c) => this.#foldName(c)), this.#foldName(part)]),
            () => done(null, [[], line]),
          );
        }
        : undefined,
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
      const ttyWrite = rl._ttyWrite.bind(rl);
      rl._ttyWrite = (s: string | undefined, key: KeyPress | undefined) => {
        if (this.#key(s, key)) ttyWrite(s, key);
        // During a turn the line being typed is drawn under the output, as it is now.
        if (this.#busy && !this.#prompting) screen.redraw();
      };
      this.#bracketedPaste(true);
    }
  }

  /**
   * Handles the composer's own keys; returns whether readline should handle the key as usual.
   * Deno's decoder gives the paste markers ESC[200~ and ESC[201~ as the code `[200`/`[201`
   * followed by a separate `~`.
   */
  #key(s: string | undefined, key: KeyPress | undefined): boolean {
    if (this.#skipTilde) {
      this.#skipTilde = false;
      if (s === "~") return false;
    }
    if (key?.code === "[200") {
      this.#paste = "";
      this.#skipTilde = true;
      return false;
    }
    if (this.#paste !== undefined) {
      if (key?.code === "[201") {
        const text = this.#paste;
        this.#paste = undefined;
        this.#skipTilde = true;
        this.#pasted(text);
      } else if (key?.name === "return" || key?.name === "enter") this.#paste += "\n";
      else this.#paste += s ?? key?.sequence ?? "";
      return false;
    }
    // Alt-Enter or Ctrl-J: a newline in the input, not the end of it.
    if ((key?.name === "return" && key.meta) || key?.name === "enter") {
      this.#insert("\n");
      return false;
    }
    if (this.#search && this.#searching(s, key)) return false;
    if (this.#menu && (key?.name === "up" || key?.name === "down")) {
      // deno-lint-ignore no-explicit-any
      const below = (this.#rl as any).getCursorPos?.().rows ?? 0;
      process.stderr.write(this.#menu.move(key.name === "up" ? 1 : -1, below, screenHeight()));
      return false;
    }
    // Two Escs typed quickly reach the decoder together and come out as one key, `\x1b\x1b`.
    if (key?.name === "escape") {
      this.#onEscape(key.sequence === "\x1b\x1b");
      return false;
    }
    if (key?.ctrl && key.name === "r" && !this.#asking) {
      this.#searchHistory();
      return false;
    }
    return true;
  }

  /**
   * A key during a Ctrl-R search: a character or Backspace changes what is searched for, Ctrl-R
   * goes on to older inputs, Ctrl-G puts the line back as it was; any other key ends the search
   * with the line found (Esc only that; Enter sends it). Returns whether the key was taken.
   */
  #searching(s: string | undefined, key: KeyPress | undefined): boolean {
    const search = this.#search!;
    if (key?.ctrl && key.name === "r") return false;
    const typed = s !== undefined && s.length === 1 && s >= " " && s !== "\x7f" && !key?.ctrl &&
      !key?.meta;
    if (typed || key?.name === "backspace") {
      search.query = typed ? search.query + s : search.query.slice(0, -1);
      search.from = 0;
      this.#searchHistory();
      return true;
    }
    this.#search = undefined;
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    rl.setPrompt(search.prompt);
    if (key?.ctrl && key.name === "g") rl.line = search.line;
    rl.cursor = rl.line.length;
    rl._refreshLine?.();
    return (key?.ctrl && key.name === "g") || key?.name === "escape";
  }

  /**
   * Ctrl-R: the newest earlier input holding what is typed replaces the line, and the prompt
   * shows what is searched for; typing on searches for more, Ctrl-R again goes on to older ones.
   */
  #searchHistory(): void {
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    const history: string[] = rl.history ?? [];
    const line: string = rl.line ?? "";
    this.#search ??= { query: line, from: 0, prompt: rl.getPrompt(), line };
    const search = this.#search;
    rl.setPrompt(`(search: ${terminalLine(search.query, { style: "escape" })})> `);
    const found = history.findIndex((h, i) =>
      i >= search.from && h.includes(search.query) &&
      (h !== search.line || search.query !== search.line)
    );
    if (found >= 0) {
      search.from = found + 1;
      rl.line = history[found];
    } else process.stderr.write("\x07");
    rl.cursor = rl.line.length;
    rl._refreshLine?.();
  }

  /** A paste arrived whole: onto the line (short, one line) or folded; held during a question. */
  #pasted(raw: string): void {
    const text = raw.replace(/\r\n?/g, "\n");
    if (text === "") return;
    const lines = text.replace(/\n$/, "").split("\n").length;
    let shown = text;
    // A paste holding escapes or control bytes (copied from a hostile page or file) is folded
    // too: readline draws the line as it is, and the terminal would obey them. The model still
    // gets the paste exactly.
    if (text.includes("\n") || text.length > FOLD_CHARS || printable(text) !== text) {
      this.#pastes++;
      const size = lines > 1 ? `${lines} lines` : `${text.length} characters`;
      shown = `[pasted ${size}${this.#pastes > 1 ? ` #${this.#pastes}` : ""}]`;
      this.#folded.set(shown, text.replace(/\n$/, ""));
    }
    if (this.#asking) {
      // Never the answer to a question: kept for the prompt after it.
      this.#held += shown;
      process.stderr.write(
        `\n(the paste is kept for the next prompt; type the answer to the question)\n`,
      );
      // deno-lint-ignore no-explicit-any
      (this.#rl as any)._refreshLine?.();
      return;
    }
    this.#insert(shown);
  }

  #insert(text: string): void {
    // deno-lint-ignore no-explicit-any
    (this.#rl as any)._insertString(text);
  }

  /** Turns bracketed paste on or off; off again at exit, whatever ends the process. */
  #bracketedPaste(on: boolean): void {
    if (on === this.#pasteOn) return;
    this.#pasteOn = on;
    try {
      Deno.stderr.writeSync(new TextEncoder().encode(on ? PASTE_ON : PASTE_OFF));
    } catch { /* the terminal is gone */ }
    if (on) globalThis.addEventListener("unload", this.#pasteOff);
    else globalThis.removeEventListener("unload", this.#pasteOff);
  }

  /**
   * `text` as readline may draw it: itself when it is printable, else with each control or
   * formatting character spelled out (`\x1b`), remembered so that the line sent has `text` back.
   */
  #foldName(text: string): string {
    const shown = terminalLine(text, { style: "escape", tabs: false });
    if (shown !== text) this.#folded.set(shown, text);
    return shown;
  }

  /** The line with what was folded on it unfolded, the folds kept (the line is still composed). */
  #unfoldKept(line: string): string {
    let out = line;
    for (const [shown, text] of this.#folded) out = out.split(shown).join(text);
    return out;
  }

  /** The line with its folded pastes unfolded. */
  #unfold(line: string): string {
    if (this.#folded.size === 0) return line;
    let out = line;
    for (const [shown, text] of this.#folded) out = out.split(shown).join(text);
    this.#folded.clear();
    return out;
  }

  /** Opens the reader; `historyFile` is read now and appended to as inputs arrive. */
  static async open(terminal: boolean, historyFile?: string): Promise<LineReader> {
    const history = historyFile && terminal ? await readHistory(historyFile) : [];
    return new LineReader(terminal, historyFile, history);
  }

  /** Called for Ctrl-C while the terminal is in raw mode (a signal otherwise). */
  set onInterrupt(handler: () => void) {
    this.#onInterrupt = handler;
  }

  /** Completes the line on Tab: the candidates and the part of the line they replace. */
  set completer(handler: (line: string) => Promise<[string[], string]>) {
    this.#complete = handler;
  }

  /** Called for a lone Esc (on a terminal); `double` for two that arrived as one key. */
  set onEscape(handler: (double: boolean) => void) {
    this.#onEscape = handler;
  }

  /** Called with each line typed ahead while busy (on a terminal). */
  set onQueued(handler: (line: string) => void) {
    this.#onQueued = handler;
  }

  /**
   * A turn runs: typed lines are queued; the line being typed is drawn under the output (on a
   * terminal), editable with the usual keys.
   */
  set busy(value: boolean) {
    if (value === this.#busy) return;
    this.#busy = value;
    // Drawn only where the console draws: stderr a terminal too (not a log file).
    if (this.terminal && Deno.stderr.isTerminal()) {
      screen.compose(value ? () => this.#composerLine() : undefined);
    }
  }

  /** What is typed on the composer line now (folded pastes as shown). */
  get line(): string {
    // deno-lint-ignore no-explicit-any
    return this.terminal ? (this.#rl as any).line ?? "" : "";
  }

  /**
   * Sends `line` as if typed and entered at the prompt waiting now (echoed after it); false when
   * no prompt waits.
   */
  submit(line: string): boolean {
    if (!this.#waiting || this.#asking) return false;
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    rl.line = "";
    rl.cursor = 0;
    process.stderr.write(`${printable(line)}\n`);
    this.#deliver(line);
    return true;
  }

  /** The composer line under a running turn: undefined while a question or a prompt is up. */
  #composerLine() {
    if (!this.#busy || this.#prompting || this.#asking) return undefined;
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    const line: string = rl.line ?? "";
    if (line === "") return undefined;
    const cursor: number = rl.cursor ?? line.length;
    const before = printable(line.slice(0, cursor));
    const shown = printable(line);
    return fitComposer(NEXT_PROMPT, shown, before.length, screenWidth());
  }

  /** Drops the lines typed ahead; returns how many there were. */
  dropQueued(): number {
    const dropped = this.#queue.length;
    this.#queue.length = 0;
    return dropped;
  }

  /**
   * Tells `text` (a line) without disturbing the user: above the prompt and what is typed on it,
   * both drawn again below it; during a turn, above the composer line.
   */
  tellAbove(text: string): void {
    if (!this.terminal) {
      process.stderr.write(`${text}\n`);
    } else if (this.#waiting && !this.#asking && !this.#busy) {
      process.stderr.write(`\r\x1b[2K${text}\n`);
      this.#rl.prompt(true);
    } else {
      screen.write(`${text}\n`);
    }
  }

  /** Clears what is typed on the prompt line and shows the prompt (or `prompt` now) again. */
  clearLine(prompt?: string): void {
    if (!this.terminal) return;
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    rl.line = "";
    rl.cursor = 0;
    if (prompt !== undefined) this.#rl.setPrompt(prompt);
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
      if (typedAhead) process.stderr.write(`${current}${printable(line)}\n`);
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
    const line = await this.#question(question);
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
      return await this.#question(question);
    } finally {
      if (this.terminal) {
        rl.history = history;
        rl.historyIndex = -1;
      }
    }
  }

  /**
   * A question about `rows`, the lines written just above it (see RowMenu): ↑/↓ move a mark over
   * them and Enter on an empty line answers the marked row; a row is never put on the answer
   * line. Off a terminal, as `ask`.
   */
  async select(question: string, rows: string[]): Promise<string | null> {
    if (!this.terminal) return await this.ask(question);
    const menu = this.#menu = new RowMenu(rows);
    try {
      return menu.answer(await this.ask(question));
    } finally {
      this.#menu = undefined;
    }
  }

  /** Wakes a pending read or ask with null (as at end of input). */
  cancelPending(): void {
    this.#deliver(null);
  }

  /** Stops reading; bracketed paste is turned off. */
  close(): void {
    this.#rl.close();
    if (this.terminal) this.#bracketedPaste(false);
  }

  /**
   * A question: what was being composed (typed ahead, pasted) is set aside, so the answer is only
   * what is typed now, and put back on the composer line afterwards.
   */
  async #question(question: string): Promise<string | null> {
    if (!this.terminal) return await this.#wait(question);
    // deno-lint-ignore no-explicit-any
    const rl = this.#rl as any;
    // The composer line under a turn leaves the screen to the question, and comes back after.
    const release = screen.hold();
    this.#held = rl.line ?? "";
    rl.line = "";
    rl.cursor = 0;
    this.#asking = true;
    try {
      return await this.#wait(question);
    } finally {
      this.#asking = false;
      if (this.#held !== "") {
        rl.line = this.#held + (rl.line ?? "");
        rl.cursor = rl.line.length;
      }
      this.#held = "";
      release();
    }
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
      // A line typed during the turn (or kept over a question) is shown with the cursor where
      // it was, at its end after typing; readline would put it at the start.
      this.#rl.prompt(true);
    }
    return answer;
  }

  #push(raw: string): void {
    const line = this.#asking ? raw : this.#unfold(raw);
    if (this.#waiting) this.#deliver(line);
    else {
      this.#queue.push(line);
      if (this.terminal && this.#busy) this.#onQueued(raw);
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
    this.#history = await rememberInput(this.historyFile, this.#history, input);
  }
}

/** A key as node:readline's decoder reports it. */
interface KeyPress {
  name?: string;
  sequence?: string;
  code?: string;
  ctrl?: boolean;
  meta?: boolean;
}
