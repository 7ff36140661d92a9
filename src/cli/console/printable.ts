/**
 * Text from the model, a tool or a file, made safe to print on a terminal. A hostile model (or
 * repository) could otherwise send escape sequences that retitle the window, rewrite lines
 * already shown, hide text or worse. Control characters other than newline and tab become
 * visible symbols; colour is added by the console afterwards, never passed through.
 */

// C0 controls except \t and \n, DEL, and the C1 controls (which some terminals also obey).
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** `text` with every control character except newline and tab replaced by a visible one. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => c === "\x1b" ? "␛" : c === "\r" ? "" : "�");
}
