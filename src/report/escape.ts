/**
 * The one way text from a run reaches the page. Everything a model, a repository or a tool wrote
 * goes through `text` (or `block`, which also cuts it): HTML's special characters become entities,
 * so no markup, script, style or link in it takes effect, and control characters (ANSI escape
 * sequences among them) and broken UTF-16 are spelled out so they show instead of acting.
 */

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Control characters a reader sees as a code: `\x1b` → `␛`-style `\x1b`, except tab and newline. */
function spellControl(char: string): string {
  const code = char.codePointAt(0)!;
  if (code === 0x1b) return "\\e";
  if (code === 0x7f) return "\\x7f";
  if (code < 0x20) return `\\x${code.toString(16).padStart(2, "0")}`;
  // C1 controls, line/paragraph separators, bidirectional overrides and isolates: they reorder or
  // hide what is shown.
  return `\\u{${code.toString(16)}}`;
}

// Control characters (not tab, newline), C1 controls, the line separators, the bidi controls, and
// lone surrogates (what a non-UTF-8 byte becomes in some decoders).
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SPECIAL = /[&<>"']/g;

/** `value` as inert HTML text (usable in element content and in quoted attribute values). */
export function text(value: unknown): string {
  const s = value === null || value === undefined ? "" : String(value);
  return s.replace(
    UNSAFE,
    (c) => c.length === 1 && /[\ud800-\udfff]/.test(c) ? "\\u{fffd}" : spellControl(c),
  )
    .replace(SPECIAL, (c) => ENTITIES[c]);
}

/** Limits on a block of text shown in the page. */
export interface BlockLimits {
  /** Characters a line keeps before it is cut with a note. */
  line: number;
  /** Characters the whole block keeps before it is cut with a note. */
  total: number;
}

/** The default limits: a 1 MB line does not make a 1 MB page. */
export const BLOCK_LIMITS: BlockLimits = { line: 2000, total: 100_000 };

/**
 * A multi-line block as inert HTML: each line cut at `limits.line` characters and the block at
 * `limits.total`, each cut marked with a note saying how much was left out.
 */
export function block(value: unknown, limits: BlockLimits = BLOCK_LIMITS): string {
  const s = value === null || value === undefined ? "" : String(value);
  const lines: string[] = [];
  let kept = 0;
  let start = 0;
  while (start <= s.length) {
    const newline = s.indexOf("\n", start);
    const end = newline < 0 ? s.length : newline;
    const keep = Math.min(end - start, limits.line, limits.total - kept);
    const cut = end - start - keep;
    lines.push(
      text(s.slice(start, start + keep)) +
        (cut > 0 ? `<span class="cut">… ${cut} more characters on this line cut</span>` : ""),
    );
    kept += keep;
    start = end + 1;
    if (kept >= limits.total && start < s.length) {
      lines.push(`<span class="cut">… ${s.length - start} more characters cut</span>`);
      break;
    }
  }
  return lines.join("\n");
}
