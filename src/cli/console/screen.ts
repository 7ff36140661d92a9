/**
 * The bottom of the terminal during an interactive turn: the line the user is typing (the
 * composer) stays drawn under the live output. Everything the console writes to stderr passes
 * through `screenWrite`: the composer line is erased, the output written, and the line drawn
 * again below it, so output and typing never interleave. When the output stops in the middle of a
 * line (a streamed sentence, the spinner), the composer goes on the row below, and that unfinished
 * line is drawn again in full before more output continues it. Without a composer line (`deft
 * run`, an idle prompt, an empty line) the bytes pass through unchanged.
 */

import { columns, WordWrap } from "./wrap.ts";

export { columns };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the composer line shows: its text (one row, already fitted) and the cursor's column. */
export interface ComposerLine {
  text: string;
  cursor: number;
}

/** The terminal's bottom: the output so far on its last row, and the composer drawn under it. */
export class Screen {
  // The output since its last newline (after a carriage return: what follows it).
  #partial = "";
  // The composer line on screen: whether it is, and whether it went below an unfinished row.
  #shown = false;
  #below = false;
  #composer: (() => ComposerLine | undefined) | undefined;
  #held = 0;

  // Console output wrapped at word boundaries (wrap.ts), when the width is known.
  readonly #wrap = new WordWrap();

  /**
   * `width` is the terminal's for the composer line (a guess when unknown); `wrapWidth` the one
   * output is wrapped at, 0 when none is (off a terminal, or a terminal that reports no size).
   */
  constructor(
    private readonly sink: (bytes: Uint8Array) => void,
    private readonly width: () => number,
    private readonly wrapWidth: () => number = () => 0,
  ) {}

  /** Writes console output: the composer line is erased first and drawn again after. */
  write(text: string): void {
    const wrapped = this.#wrap.push(text, this.wrapWidth());
    this.#sink(this.#erase() + wrapped);
    this.#track(wrapped);
    this.#sink(this.#draw());
  }

  /** Writes console output given as bytes. */
  writeBytes(bytes: Uint8Array): void {
    this.write(decoder.decode(bytes));
  }

  /**
   * Installs (or, with undefined, removes and erases) the composer line's source. The cursor is
   * taken to be at the start of a row (the user just pressed Enter).
   */
  compose(source: (() => ComposerLine | undefined) | undefined): void {
    this.#sink(this.#erase());
    this.#composer = source;
    this.#partial = "";
    this.#wrap.reset();
    this.#sink(this.#draw());
  }

  /** Draws the composer line again (it changed: a key was typed). */
  redraw(): void {
    this.#sink(this.#erase() + this.#draw());
  }

  /**
   * Takes the composer line off the screen until the returned function is called (a question
   * owns the terminal); then the cursor is taken to be at a row's start and the line comes back.
   */
  hold(): () => void {
    this.#sink(this.#erase());
    this.#held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#partial = "";
      this.#wrap.reset();
      this.#sink(this.#draw());
    };
  }

  #sink(text: string): void {
    if (text !== "") this.sink(encoder.encode(text));
  }

  #track(text: string): void {
    const newline = text.lastIndexOf("\n");
    this.#partial = newline < 0 ? this.#partial + text : text.slice(newline + 1);
    const cr = this.#partial.lastIndexOf("\r");
    if (cr >= 0) this.#partial = this.#partial.slice(cr + 1);
  }

  #erase(): string {
    if (!this.#shown) return "";
    this.#shown = false;
    let out = "\r\x1b[2K";
    if (this.#below) {
      // Back to the first row of the unfinished output line, which is drawn again in full.
      const rows = Math.max(1, Math.ceil(columns(this.#partial) / this.#cols()));
      out += `\x1b[${rows}A\r\x1b[J${this.#partial}`;
    }
    return out;
  }

  #draw(): string {
    if (this.#held > 0 || !this.#composer) return "";
    const line = this.#composer();
    if (!line || line.text === "") return "";
    this.#shown = true;
    this.#below = columns(this.#partial) > 0;
    const back = columns(line.text) - line.cursor;
    return (this.#below ? "\n" : "") + line.text + (back > 0 ? `\x1b[${back}D` : "");
  }

  #cols(): number {
    const cols = this.width();
    return cols > 0 ? cols : 80;
  }
}

function terminalWidth(): number {
  try {
    const { columns } = Deno.consoleSize();
    return columns > 0 ? columns : 80;
  } catch {
    return 80;
  }
}

function writeStderr(bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
}

/** The terminal's screen (stderr): one for the process. */
export const screen = new Screen(writeStderr, terminalWidth, knownWidth);

/** Writes `bytes` to stderr around the composer line (see `Screen`). */
export function screenWrite(bytes: Uint8Array): void {
  screen.writeBytes(bytes);
}

/**
 * The composer line for a terminal `width` columns wide: `prompt` and `line` on one row, the
 * newlines in it shown as ↵, the part around the cursor kept when it is too long.
 */
export function fitComposer(
  prompt: string,
  line: string,
  cursor: number,
  width: number,
): ComposerLine {
  const flat = [...line.replace(/\n/g, "↵").replace(/\t/g, " ")];
  const at = [...line.slice(0, cursor)].length;
  const room = Math.max(10, width - columns(prompt) - 2);
  if (columns(flat.join("")) <= room) {
    return {
      text: prompt + flat.join(""),
      cursor: columns(prompt) + columns(flat.slice(0, at).join("")),
    };
  }
  // Too long for the row: a window of it ending at the cursor (or at its end), "…" before.
  let end = Math.max(at, Math.min(flat.length, room - 1));
  end = Math.min(flat.length, Math.max(end, at));
  let start = end;
  while (start > 0 && columns(flat.slice(start - 1, end).join("")) <= room - 1) start--;
  const shown = (start > 0 ? "…" : "") + flat.slice(start, end).join("");
  const cursorCol = columns(prompt) + (start > 0 ? 1 : 0) + columns(flat.slice(start, at).join(""));
  return { text: prompt + shown, cursor: cursorCol };
}

/**
 * The width of the terminal stderr is, when it says (0 otherwise: off a terminal, or one that
 * reports no size, nothing is wrapped or clipped).
 */
export function knownWidth(): number {
  try {
    return Deno.stderr.isTerminal() ? Math.max(0, Deno.consoleSize().columns) : 0;
  } catch {
    return 0;
  }
}

/** The terminal's height in rows (a very tall one when unknown). */
export function screenHeight(): number {
  try {
    const { rows } = Deno.consoleSize();
    return rows > 0 ? rows : Number.MAX_SAFE_INTEGER;
  } catch {
    return Number.MAX_SAFE_INTEGER;
  }
}

/** The terminal's width in columns (80 when unknown). */
export function screenWidth(): number {
  return terminalWidth();
}
