/** The layout conventions of a JSON file, so inserted values look like their neighbours. */

/** How a file lays out its JSON. */
export interface JsonStyle {
  /** One level of indentation: a tab or some spaces. */
  indent: string;
  eol: "\n" | "\r\n";
  /** Between a key and its value, e.g. `": "`. */
  colon: string;
  /** Between members on one line, e.g. `", "`. */
  comma: string;
}

/**
 * Detects the indentation unit (tabs, or the most common step between indented lines), the line
 * break and the separators of `text`. Defaults: two spaces, `\n`, `": "`, `", "`.
 */
export function detectStyle(text: string): JsonStyle {
  const lines = text.split("\n");
  const crlf = lines.slice(0, -1).filter((l) => l.endsWith("\r")).length;
  const eol = crlf * 2 > lines.length - 1 ? "\r\n" : "\n";
  let tabs = 0;
  let spaced = 0;
  const steps = new Map<number, number>();
  let previous = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const lead = /^[ \t]*/.exec(line)![0];
    if (lead.startsWith("\t")) tabs++;
    else if (lead.length > 0) spaced++;
    if (!lead.includes("\t")) {
      const step = lead.length - previous;
      if (step > 0) steps.set(step, (steps.get(step) ?? 0) + 1);
      previous = lead.length;
    }
  }
  let indent = "  ";
  if (tabs > spaced) indent = "\t";
  else if (steps.size > 0) {
    const [best] = [...steps.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    indent = " ".repeat(best);
  }
  const colon = /"\s*:( ?)/.exec(text)?.[1] === "" ? ":" : ": ";
  // Only a comma followed by more on the same line tells the inline style.
  const comma = /,( ?)[^\s]/.exec(text)?.[1] === "" ? "," : ", ";
  return { indent, eol, colon, comma };
}

/**
 * `value` as JSON text. With `pretty`, objects and arrays span several lines indented in `style`
 * below `base` (the indentation of the line the value starts on); otherwise one line.
 */
export function renderValue(
  value: unknown,
  style: JsonStyle,
  base: string,
  pretty: boolean,
): string {
  if (!pretty) return JSON.stringify(value);
  return renderPretty(value, style, base);
}

function renderPretty(value: unknown, style: JsonStyle, base: string): string {
  const inner = base + style.indent;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((item) => inner + renderPretty(item, style, inner));
    return `[${style.eol}${items.join(`,${style.eol}`)}${style.eol}${base}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const items = entries.map(([k, v]) =>
      `${inner}${JSON.stringify(k)}${style.colon}${renderPretty(v, style, inner)}`
    );
    return `{${style.eol}${items.join(`,${style.eol}`)}${style.eol}${base}}`;
  }
  return JSON.stringify(value);
}
