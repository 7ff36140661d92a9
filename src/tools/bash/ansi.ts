// deno-lint-ignore-file no-control-regex -- matching control characters is this file's job.
/**
 * Removes terminal escape sequences (colours, cursor moves, titles, hyperlinks) from text, also
 * when the text arrives in pieces that split a sequence.
 */

// CSI (ESC [ … final), OSC (ESC ] … BEL or ST), DCS/SOS/PM/APC strings (… ST), the other
// two- and three-byte escapes, the 8-bit CSI, and finally a lone ESC that starts nothing valid.
const ESCAPES =
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[ -/]*[0-~])?|\x9b[0-?]*[ -/]*[@-~]/g;
const CSI_COMPLETE = /^(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]/;
const INTRO_COMPLETE = /^\x1b[ -/]*[0-~]/;
const STRING_INTRODUCERS = ["\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_"];
// A sequence longer than this is not a sequence we know; stop holding it back.
const MAX_PENDING = 4096;

/** Strips every escape sequence from a complete text. */
export function stripAnsi(text: string): string {
  if (!text.includes("\x1b") && !text.includes("\x9b")) return text;
  return text.replace(ESCAPES, "");
}

/** A stripper for text that arrives in pieces: `push` each piece, then `flush` once. */
export class AnsiStripper {
  #pending = "";

  /** Strips `text`, holding back an escape sequence that may continue in the next piece. */
  push(text: string): string {
    if (this.#pending !== "") {
      text = this.#pending + text;
      this.#pending = "";
    }
    const cut = incompleteStart(text);
    if (cut >= 0) {
      this.#pending = text.slice(cut);
      text = text.slice(0, cut);
    }
    return stripAnsi(text);
  }

  /** Strips and returns whatever was held back. */
  flush(): string {
    const rest = this.#pending;
    this.#pending = "";
    return stripAnsi(rest);
  }
}

/** Where an unfinished escape sequence starts at the end of `text`, or -1. */
function incompleteStart(text: string): number {
  const start = Math.max(text.lastIndexOf("\x1b"), text.lastIndexOf("\x9b"));
  if (start < 0) return -1;
  // A string sequence (OSC, DCS, SOS, PM, APC) runs to its terminator, which may itself be split.
  const opened = Math.max(...STRING_INTRODUCERS.map((intro) => text.lastIndexOf(intro)));
  if (opened >= 0 && text.length - opened <= MAX_PENDING) {
    const body = text.slice(opened + 2);
    const closed = body.includes("\x1b\\") || (text[opened + 1] === "]" && body.includes("\x07"));
    if (!closed) return opened;
  }
  if (text.length - start > MAX_PENDING) return -1;
  const rest = text.slice(start);
  if (rest.length === 1) return start;
  if (rest[0] === "\x9b" || rest[1] === "[") return CSI_COMPLETE.test(rest) ? -1 : start;
  return INTRO_COMPLETE.test(rest) ? -1 : start;
}
