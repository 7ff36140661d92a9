/**
 * The one sanitiser for text that reaches a terminal. A hostile model or repository controls tool
 * names, arguments, outputs, model ids, config keys and task text; any of them may carry bytes a
 * terminal obeys: C0 controls (a carriage return that redraws the line), ESC sequences (OSC 0 sets
 * the window title, OSC 52 the clipboard, CSI 2J clears the screen), the 8-bit C1 controls (0x9b
 * is a one-byte CSI on some terminals), and zero-width or bidirectional formatting characters that
 * make a command read as something else. After `terminalText` none of them is left raw.
 *
 * It lives in policy, below every layer that prints (agent, config, cli), so all share it.
 */

// C0 controls, DEL and C1 controls.
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;

// Zero-width, joiners, direction marks, bidi embeddings/overrides/isolates, invisible operators,
// the byte-order mark, the Arabic letter mark, the Mongolian vowel separator, line/paragraph
// separators and interlinear annotation marks.
const FORMAT =
  /[\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/;

const UNSAFE = new RegExp(`${CONTROL.source}|${FORMAT.source}`, "g");

/** How `terminalText` shows what it neutralises. */
export interface TerminalTextOptions {
  /**
   * `symbol` (the console's): ESC becomes `␛`, a carriage return is dropped, everything else `�`.
   * `escape` (for a question the user must judge exactly): each one spelled `\xNN` or `\uNNNN`.
   */
  style?: "symbol" | "escape";
  /** Keep newlines (default true); otherwise they are neutralised like the rest. */
  newlines?: boolean;
  /** Keep tabs (default true). */
  tabs?: boolean;
}

/**
 * `text` made inert for a terminal: no control character (but newline and tab, when kept), no
 * escape sequence, no zero-width or bidi formatting character is left as it was.
 *
 * @example
 * ```ts
 * terminalText("\x1b]0;pwned\x07ok"); // "␛]0;pwned�ok"
 * terminalText("ls \u202e", { style: "escape" }); // "ls \\u202e"
 * ```
 */
export function terminalText(text: string, options: TerminalTextOptions = {}): string {
  const keepNewlines = options.newlines ?? true;
  const keepTabs = options.tabs ?? true;
  const escape = options.style === "escape";
  return text.replace(UNSAFE, (c) => {
    if (c === "\n" && keepNewlines) return c;
    if (c === "\t" && keepTabs) return c;
    const code = c.charCodeAt(0);
    if (escape) {
      return code < 0x100
        ? `\\x${code.toString(16).padStart(2, "0")}`
        : `\\u${code.toString(16).padStart(4, "0")}`;
    }
    if (c === "\x1b") return "␛";
    if (c === "\r") return "";
    return "�";
  });
}

/** One line of terminal text: like `terminalText`, newlines neutralised too. */
export function terminalLine(text: string, options: Omit<TerminalTextOptions, "newlines"> = {}) {
  return terminalText(text, { ...options, newlines: false });
}
