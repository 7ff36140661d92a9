/**
 * Text laid out for the terminal's width: wrapped at word boundaries (a word longer than a row
 * still breaks where the row ends), or clipped to one row. Escape sequences take no columns and
 * wide characters two (`columns`), so coloured and CJK text lines up as the terminal shows it.
 */

// An escape sequence (CSI, OSC, or a two-byte one): no columns.
// deno-lint-ignore no-control-regex
const ESCAPE_SEQUENCES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]/g;

/** Columns `text` takes on a terminal (escape sequences take none, wide characters two). */
export function columns(text: string): number {
  let width = 0;
  for (const ch of text.replace(ESCAPE_SEQUENCES, "")) width += charColumns(ch.codePointAt(0)!);
  return width;
}

/** Columns one character (code point `c`) takes: none for controls and combining marks. */
function charColumns(c: number): number {
  if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0x300 && c < 0x370) || c === 0x200d) return 0;
  if (c >= 0xfe00 && c <= 0xfe0f) return 0;
  return wide(c) ? 2 : 1;
}

function wide(c: number): boolean {
  return (c >= 0x1100 && c <= 0x115f) || (c >= 0x2e80 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) || (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) || (c >= 0x1f300 && c <= 0x1faff) ||
    (c >= 0x20000 && c <= 0x3fffd);
}

/** `text` (one line) clipped to `width` columns, `…` last when something was cut. */
export function fitRow(text: string, width: number): string {
  if (width <= 0 || columns(text) <= width) return text;
  let out = "";
  let used = 0;
  for (const ch of text) {
    const w = columns(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…`;
}

// The escape sequence starting where `lastIndex` is, if one does.
const ESCAPE_AT = new RegExp(ESCAPE_SEQUENCES.source, "y");

/** Below this width nothing is wrapped: there is no room to lay words out. */
const MIN_WIDTH = 20;
/** Columns a wrapped row keeps for text, whatever its indent. */
const MIN_ROOM = 20;

/** What starts a wrapped row, and its columns. */
interface Indent {
  text: string;
  cols: number;
}

/**
 * Wraps text written to a terminal in pieces (streamed words, lines) at word boundaries: a word
 * that would cross the right edge goes to the next row whole, a word longer than a row breaks
 * where the row ends. A wrapped row is indented as the line's first row is (its leading spaces,
 * or the column a table's second column starts at, after two spaces or more), so `/help`'s
 * descriptions and a tool's `│` output stay in their column. A word begun in an earlier piece is
 * taken back from the screen (the cursor put where it starts, the row cleared from there) and
 * written again on the next row. Carriage returns and newlines start a row; escape sequences
 * pass through and take no columns.
 */
export class WordWrap {
  // Columns used on the current row, and its visible text (for the indent of its wrapped rows).
  #col = 0;
  #row = "";
  // The indent of the current line's wrapped rows, set at its first wrap.
  #indent: Indent | undefined;
  // The unfinished word at the row's end: as written (escapes too), its columns, its start
  // column, and whether it may still go down whole (not the rest of a word broken at the edge).
  #word = "";
  #wordCols = 0;
  #wordStart = 0;
  #movable = true;
  // A row was just broken: spaces are not carried onto the new row.
  #broken = false;

  /** The cursor is at the start of a row (after a prompt line, a cleared screen…). */
  reset(): void {
    this.#newRow();
    this.#indent = undefined;
  }

  /** `text` with the row breaks a terminal `width` columns wide needs. */
  push(text: string, width: number): string {
    if (width < MIN_WIDTH) {
      this.#track(text);
      return text;
    }
    // The pieces written, a character or an escape sequence each, so that taking a word back
    // or the spaces before a break is cheap.
    const out: string[] = [];
    // Where the unfinished word's text in `out` starts; a word begun in an earlier piece
    // continues from the piece's start.
    let wordAt = 0;
    let earlier = this.#word !== "";
    let i = 0;
    while (i < text.length) {
      ESCAPE_AT.lastIndex = i;
      const escape = ESCAPE_AT.exec(text);
      if (escape) {
        out.push(escape[0]);
        if (this.#word !== "") this.#word += escape[0];
        i += escape[0].length;
        continue;
      }
      const code = text.codePointAt(i)!;
      const ch = String.fromCodePoint(code);
      i += ch.length;
      if (ch === "\n" || ch === "\r") {
        out.push(ch);
        this.#newRow();
        if (ch === "\n") this.#indent = undefined;
        continue;
      }
      if (ch === " " || ch === "\t") {
        this.#word = "";
        if (this.#broken) continue;
        const w = ch === "\t" ? 8 - (this.#col % 8) : 1;
        if (this.#col + w > width) {
          trimSpaces(out);
          out.push(this.#break(width));
        } else {
          out.push(ch);
          this.#col += w;
          this.#row += " ".repeat(w);
        }
        continue;
      }
      const w = charColumns(code);
      if (this.#col + w > width) {
        const indent = this.#hang(width);
        const word = this.#word;
        const cols = this.#wordCols;
        // The rest of the word, as far as this piece tells: a word too long for any row is
        // broken where this one ends rather than moved down.
        const rest = columns(/^[^ \t\n\r]*/.exec(text.slice(i - ch.length, i + 1024))![0]);
        if (
          word !== "" && this.#movable && this.#wordStart > indent.cols &&
          indent.cols + cols + rest <= width
        ) {
          // The word goes down whole: taken back from this piece, or from the screen.
          out.length = earlier ? 0 : wordAt;
          trimSpaces(out);
          if (earlier) out.push(`\x1b[${this.#wordStart + 1}G\x1b[K`);
          out.push(this.#break(width));
          wordAt = out.length;
          out.push(word);
          this.#word = word;
          this.#wordCols = cols;
          this.#wordStart = this.#col;
          this.#col += cols;
          this.#row += word.replace(ESCAPE_SEQUENCES, "");
        } else {
          // Too long for a row, or alone on it: broken where the row ends; the rest stays.
          if (word === "") trimSpaces(out);
          out.push(this.#break(width));
          if (word !== "") {
            this.#word = word;
            this.#wordCols = 0;
            this.#wordStart = this.#col;
            this.#movable = false;
          }
        }
        earlier = false;
        this.#broken = false;
      }
      this.#broken = false;
      if (this.#word === "") {
        this.#wordStart = this.#col;
        this.#wordCols = 0;
        this.#movable = true;
        wordAt = out.length;
        earlier = false;
      }
      out.push(ch);
      this.#word += ch;
      this.#wordCols += w;
      this.#col += w;
      this.#row += ch;
    }
    return out.join("");
  }

  // A row break, and the indent of wrapped rows.
  #break(width: number): string {
    const indent = this.#hang(width);
    this.#newRow();
    this.#col = indent.cols;
    this.#row = indent.text;
    this.#broken = true;
    return `\n${indent.text}`;
  }

  // The indent of the current line's wrapped rows, from its first row: up to where the text
  // after a gap of two spaces or more starts (a table's second column), else its leading spaces
  // and a `│ ` gutter after them; never so deep that a row keeps less than MIN_ROOM columns.
  #hang(width: number): Indent {
    if (this.#indent !== undefined) return this.#indent;
    const most = Math.min(width - MIN_ROOM, Math.max(Math.floor(width / 2), 40));
    const gap = /^ *\S.*? {2,}(?=\S)/.exec(this.#row);
    const lead = /^ *(?:│ )?/.exec(this.#row)![0];
    const column = gap ? columns(gap[0]) : 0;
    this.#indent = column > 0 && column <= most
      ? { text: " ".repeat(column), cols: column }
      : columns(lead) <= most
      ? { text: lead, cols: columns(lead) }
      : { text: "", cols: 0 };
    return this.#indent;
  }

  #newRow(): void {
    this.#col = 0;
    this.#row = "";
    this.#word = "";
    this.#wordCols = 0;
    this.#movable = true;
    this.#broken = false;
  }

  // Keeps count of the row when nothing is wrapped (a narrow or unknown width).
  #track(text: string): void {
    const end = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
    if (end >= 0) {
      this.reset();
      text = text.slice(end + 1);
    }
    this.#col += columns(text);
    this.#row += text.replace(ESCAPE_SEQUENCES, "");
    this.#word = "";
  }
}

/** Drops the spaces `out` ends with (a row's end, before a break): they would show nothing. */
function trimSpaces(out: string[]): void {
  while (out.length > 0 && out[out.length - 1] === " ") out.pop();
}

/** `text` (starting at a row's start) wrapped for a terminal `width` columns wide. */
export function wrapText(text: string, width: number): string {
  return new WordWrap().push(text, width);
}
