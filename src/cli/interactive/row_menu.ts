/**
 * The mark the arrow keys move over a list on screen (the session picker): the rows were written
 * just above the question, the lowest first, each one terminal row starting with a two-column
 * gutter where the mark (`›`) is drawn. The answer line is never touched: the rows are redrawn
 * in place, the cursor saved and put back.
 */

/** The mark over the rows of a list, and how to draw its moves. */
export class RowMenu {
  /** The marked row (0: the lowest), or -1 for none. */
  marked = -1;

  constructor(readonly rows: readonly string[]) {}

  /**
   * Moves the mark `by` rows up (negative: down; below the lowest, no mark) and returns what
   * redraws the rows it left and reached. `below` is how many rows of the prompt lie between the
   * list and the cursor; `height` the terminal's (a row scrolled off its top is left alone).
   */
  move(by: number, below: number, height: number): string {
    const next = Math.max(-1, Math.min(this.rows.length - 1, this.marked + by));
    if (next === this.marked) return "";
    const before = this.marked;
    this.marked = next;
    return (before >= 0 ? this.#draw(before, "  ", below, height) : "") +
      (next >= 0 ? this.#draw(next, "› ", below, height) : "");
  }

  /** The answer: what was typed, else (an empty line) the marked row. */
  answer(typed: string | null): string | null {
    return typed !== null && typed.trim() === "" && this.marked >= 0
      ? this.rows[this.marked]
      : typed;
  }

  #draw(index: number, gutter: string, below: number, height: number): string {
    const up = below + 1 + index;
    if (up >= height) return "";
    return `\x1b7\x1b[${up}A\r\x1b[2K${gutter}${this.rows[index].slice(2)}\x1b8`;
  }
}
