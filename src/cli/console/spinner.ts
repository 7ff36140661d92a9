/**
 * A one-line spinner with the elapsed time (`⠹ waiting for the model · 3.2 s`), redrawn in place
 * on a terminal. `stop` erases it, so whatever is written next starts on a clean line. A question
 * to the user takes the screen with `holdScreen`: the spinner goes away while the user answers.
 */

import { terminalLine } from "../../policy/terminal_text.ts";
import { knownWidth } from "./screen.ts";
import { fitRow } from "./wrap.ts";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const encoder = new TextEncoder();

// The spinner last drawn, if any: one terminal, one spinner.
let shown: Spinner | undefined;

/**
 * Stops the spinner on screen (if any) so a question owns the terminal: nothing is drawn over the
 * prompt or the typed answer. The returned function brings the spinner back, with its label and
 * clock, on a later turn of the event loop (after the lines the answer's caller prints), unless
 * the console has moved on in between.
 */
export function holdScreen(): () => void {
  return shown?.hold() ?? (() => {});
}

/** Draws on `write` every `intervalMs` until stopped. */
export class Spinner {
  #timer?: ReturnType<typeof setInterval>;
  #started = 0;
  #label = "";
  #frame = 0;
  // Bumped by every start and stop: a held spinner comes back only if nothing else happened.
  #generation = 0;
  // A held spinner about to come back (see `hold`).
  #resume?: { timer: ReturnType<typeof setTimeout>; label: string; started: number };

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
    this.#generation++;
    // The label carries tool names the model chose: made inert here, whoever builds it.
    this.#run(terminalLine(label), performance.now());
  }

  /** Erases the line for one write; the next tick draws the spinner again below it. */
  clear(): void {
    if (this.#timer !== undefined) this.write(encoder.encode("\r\x1b[2K"));
  }

  /** Erases the spinner's line (and forgets a held one). */
  stop(): void {
    this.#generation++;
    this.#cancelResume();
    this.#erase();
  }

  /**
   * Stops the spinner; the returned function resumes it (see `holdScreen`). A hold right after
   * another's release (the next question in a row) takes the spinner over before it comes back.
   */
  hold(): () => void {
    let saved: { label: string; started: number };
    if (this.#resume) {
      saved = { label: this.#resume.label, started: this.#resume.started };
      this.#cancelResume();
    } else if (this.active) {
      saved = { label: this.#label, started: this.#started };
      this.#erase();
    } else {
      return () => {};
    }
    const generation = this.#generation;
    return () => {
      if (generation !== this.#generation) return;
      const timer = setTimeout(() => {
        this.#resume = undefined;
        if (generation === this.#generation && !this.active) this.#run(saved.label, saved.started);
      }, 0);
      this.#resume = { timer, ...saved };
    };
  }

  #cancelResume(): void {
    if (this.#resume) clearTimeout(this.#resume.timer);
    this.#resume = undefined;
  }

  #erase(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.write(encoder.encode("\r\x1b[2K"));
  }

  #run(label: string, started: number): void {
    this.#label = label;
    this.#started = started;
    this.#frame = 0;
    shown = this;
    this.#draw();
    this.#timer = setInterval(() => this.#draw(), this.intervalMs);
  }

  #draw(): void {
    const seconds = ((performance.now() - this.#started) / 1000).toFixed(1);
    const frame = FRAMES[this.#frame++ % FRAMES.length];
    // One row, whatever the label: a wrapped spinner would leave a row behind at each redraw.
    const line = fitRow(`${frame} ${this.#label} · ${seconds} s`, knownWidth() - 1);
    this.write(encoder.encode(`\r\x1b[2K${line}`));
  }
}
