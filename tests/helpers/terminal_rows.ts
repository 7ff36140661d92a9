/**
 * What a terminal `width` columns wide shows for a byte stream, as rows of text: enough of a
 * terminal to check how output lays out (autowrap at the right edge, newline as CR LF, carriage
 * return, cursor moves, erasing, save and restore). Colour and modes are ignored; the screen
 * never scrolls off (rows are kept from the first).
 */
import { columns } from "../../src/cli/console/wrap.ts";

export function terminalRows(output: string, width: number): string[] {
  const rows: string[][] = [[]];
  let r = 0;
  let c = 0;
  // The last column was written: the next character goes to the next row.
  let pending = false;
  let saved = { r: 0, c: 0 };
  const row = () => (rows[r] ??= []);
  const at = (n: string | undefined, or = 1) => (n === undefined || n === "" ? or : Number(n));
  const token =
    // deno-lint-ignore no-control-regex
    /\x1b\[([?0-9;]*)([ -/]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b(.)|([\s\S])/gu;
  for (const m of output.matchAll(token)) {
    const [, params, , final, esc, ch] = m;
    if (final !== undefined) {
      if (params.startsWith("?")) continue;
      const n = params.split(";")[0];
      pending = false;
      if (final === "G") c = Math.max(0, Math.min(width, at(n)) - 1);
      else if (final === "A") r = Math.max(0, r - at(n));
      else if (final === "B") r += at(n);
      else if (final === "C") c = Math.min(width - 1, c + at(n));
      else if (final === "D") c = Math.max(0, c - at(n));
      else if (final === "K") {
        const mode = at(n, 0);
        if (mode === 0) row().length = Math.min(row().length, c);
        else if (mode === 2) rows[r] = [];
        else for (let i = 0; i <= c && i < row().length; i++) row()[i] = " ";
      } else if (final === "J") {
        if (at(n, 0) === 0) {
          row().length = Math.min(row().length, c);
          rows.length = r + 1;
        }
      }
      continue;
    }
    if (esc !== undefined) {
      if (esc === "7") saved = { r, c };
      if (esc === "8") ({ r, c } = saved), pending = false;
      continue;
    }
    if (ch === undefined) continue;
    if (ch === "\n") {
      r++;
      c = 0;
      pending = false;
    } else if (ch === "\r") {
      c = 0;
      pending = false;
    } else if (ch === "\b") {
      c = Math.max(0, c - 1);
      pending = false;
    } else if (ch === "\x07") {
      continue;
    } else {
      const w = columns(ch);
      if (w === 0) continue;
      if (pending || c + w > width) {
        r++;
        c = 0;
        pending = false;
      }
      const cells = row();
      while (cells.length < c) cells.push(" ");
      cells[c] = ch;
      if (w === 2) cells[c + 1] = "";
      c += w;
      if (c >= width) {
        c = width - 1;
        pending = true;
      }
    }
  }
  return rows.map((cells) => (cells ?? []).join("").trimEnd());
}

/**
 * The words of `text` (split at white space, those up to 30 columns: a longer one may break at
 * a row's end) that `rows` shows broken across two rows: a row ending in a piece of one, and the
 * next row (after its indent and a `│ ` gutter) starting with the rest.
 */
export function brokenWords(rows: string[], text: string): string[] {
  const words = new Set(text.split(/\s+/).filter((w) => w !== "" && columns(w) <= 30));
  const broken: string[] = [];
  for (let i = 0; i + 1 < rows.length; i++) {
    const tail = /\S+$/.exec(rows[i])?.[0];
    const head = /^\s*(?:│ )?(\S+)/.exec(rows[i + 1])?.[1];
    if (!tail || !head || words.has(tail)) continue;
    if ([...words].some((w) => w.includes(tail + head))) broken.push(`${tail}|${head}`);
  }
  return broken;
}
