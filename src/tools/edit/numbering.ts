/** `cat -n` style numbering and the response-size budget every view shares. */

/** The most characters of file content a response shows (as Trae Agent). */
export const MAX_RESPONSE_CHARS = 16_000;

/** Lines numbered for the model, and how many of them fit the budget. */
export interface NumberedLines {
  text: string;
  /** How many of the given lines are shown (the last one possibly cut short). */
  shown: number;
  /** True when not every given line is shown in full. */
  clipped: boolean;
}

/**
 * Numbers `lines` from `first` as `%6d\t<line>`, joined with `\n`, keeping whole lines while the
 * result stays within `limit` characters. A first line that alone exceeds the limit is cut.
 *
 * @example
 * ```ts
 * numberLines(["a", "b"], 9).text; // "     9\ta\n    10\tb"
 * ```
 */
export function numberLines(
  lines: readonly string[],
  first: number,
  limit = MAX_RESPONSE_CHARS,
): NumberedLines {
  const out: string[] = [];
  let size = 0;
  for (let i = 0; i < lines.length; i++) {
    const numbered = `${String(first + i).padStart(6)}\t${lines[i]}`;
    const cost = numbered.length + (i > 0 ? 1 : 0);
    if (size + cost > limit) {
      if (i === 0) {
        out.push(numbered.slice(0, limit));
        return { text: out.join("\n"), shown: 1, clipped: true };
      }
      return { text: out.join("\n"), shown: i, clipped: true };
    }
    out.push(numbered);
    size += cost;
  }
  return { text: out.join("\n"), shown: lines.length, clipped: false };
}

/** Splits decoded text into display lines: at `\n`, a CR before it dropped, no empty last line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  const terminated = lines.length - 1; // the last piece has no `\n` after it
  if (lines[terminated] === "") lines.pop();
  return lines.map((line, i) => i < terminated && line.endsWith("\r") ? line.slice(0, -1) : line);
}
