/**
 * Text laid out for the terminal's width: wrapped at word boundaries (a word longer than a row
 * still breaks where the row ends), or clipped to one row. Escape sequences take no columns and
 * wide characters two (`columns`), so coloured and CJK text lines up as the terminal shows it.
 */
import { columns } from "./screen.ts";

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
