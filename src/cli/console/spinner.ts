/**
 * A one-line spinner with the elapsed time (`⠹ waiting for the model · 3.2 s`), redrawn in place
 * on a terminal. `stop` erases it, so whatever is written next starts on a clean line.
 */

import { terminalLine } from "../../policy/terminal_text.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const encoder = new TextEncoder();

/** Draws on `write` every `intervalMs` until stopped. */
export class Spinner {
  #timer?: ReturnType<typeof setInterval>;
  #started = 0;
  #label = "";
  #frame = 0;

  constructor(
    private readonly write: (bytes: Uint8Array) => void,
    private readonly intervalMs = 100,
  ) {}

  /** True while the spinner is on screen. */
  get active(): boolean {
    return this.#timer !== undefined;
  }

  /** Shows `label` with a turning wheel and the seconds since now. */
  start(label: string): void {
    this.stop();
    // The label carries tool names the model chose: made inert here, whoever builds it.
    this.#label = terminalLine(label);
    this.#started = performance.now();
    this.#frame = 0;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), this.intervalMs);
  }

  /** Erases the line for one write; the next tick draws the spinner again below it. */
  clear(): void {
    if (this.#timer !== undefined) this.write(encoder.encode("\r\x1b[2K"));
  }

  /** Erases the spinner's line. */
  stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.write(encoder.encode("\r\x1b[2K"));
  }

  #draw(): void {
    const seconds = ((performance.now() - this.#started) / 1000).toFixed(1);
    const frame = FRAMES[this.#frame++ % FRAMES.length];
    this.write(encoder.encode(`\r\x1b[2K${frame} ${this.#label} · ${seconds} s`));
  }
}
