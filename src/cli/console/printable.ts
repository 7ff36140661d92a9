/**
 * Text from the model, a tool or a file, made safe to print on a terminal: the shared sanitiser
 * (src/policy/terminal_text.ts) with the console's rendering. Colour is added by the console
 * afterwards, never passed through.
 */
import { terminalText } from "../../policy/terminal_text.ts";

/** `text` with every control, escape and invisible formatting character but newline and tab
 * replaced by a visible one. */
export function printable(text: string): string {
  return terminalText(text);
}
