/**
 * How edge searches read, in the style of the definition searches (`format.ts`): a count line,
 * then numbered `file:line` entries, clipped at the same 16,000 characters; and a JSON shape.
 */
import { ANONYMOUS, type EdgeResult } from "./edge_search.ts";
import type { SymbolRow } from "./store.ts";
import { absentNote, MISS_MEANING, type Page, pagedEntries, pageOf } from "./format.ts";

const KIND_WORD: Readonly<Record<string, string>> = {
  call: "call",
  attr: "attribute",
  import: "import",
  base: "base class",
};

function within(symbol: SymbolRow | undefined): string {
  if (!symbol) return "";
  // An anonymous function is told by its lines (in the reference's own file).
  const lines = symbol.name === ANONYMOUS ? ` (lines ${symbol.startLine}-${symbol.endLine})` : "";
  if (symbol.kind === "method" && symbol.className) {
    return ` within method ${symbol.name}${lines} of class ${symbol.className}`;
  }
  return ` within ${symbol.kind} ${symbol.name}${lines}`;
}

/** The line a miss no file holds adds (see `format.ts`). */
function absent(result: EdgeResult): string {
  if (!result.absent) return "";
  return `\n${absentNote(result.absent)}`;
}

/** Trae-style text for an edge search; bodies only when `printBody`. A `page` shows part of it. */
export function formatEdgeText(result: EdgeResult, printBody: boolean, page?: Page): string {
  const { identifier } = result;
  if (result.command === "search_references") {
    const matches = result.references;
    if (matches.length === 0) return `No references to ${identifier} found.${absent(result)}`;
    return pagedEntries(
      `Found ${matches.length} references to ${identifier}:\n`,
      matches.length,
      (i) => {
        const { ref, file, enclosing, text } = matches[i];
        let output = `${i + 1}. ${file}:${ref.line} ${KIND_WORD[ref.kind]}${within(enclosing)}\n`;
        if (text !== undefined) output += `   ${text}\n`;
        return output;
      },
      page,
    );
  }
  if (result.command === "search_callers") {
    const matches = result.callers;
    if (matches.length === 0) return `No functions calling ${identifier} found.${absent(result)}`;
    return pagedEntries(
      `Found ${matches.length} functions calling ${identifier}:\n`,
      matches.length,
      (i) => {
        const { symbol, file, lines, body } = matches[i];
        const what = symbol.kind === "method" && symbol.className
          ? `method ${symbol.name} of class ${symbol.className}`
          : `function ${symbol.name}`;
        const at = lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.join(", ")}`;
        let output = `${
          i + 1
        }. ${file}:${symbol.startLine}-${symbol.endLine} ${what} (calls at ${at})\n`;
        if (printBody && body !== undefined) output += `${body}\n\n`;
        return output;
      },
      page,
    );
  }
  const matches = result.subclasses;
  const how = result.indirect ? " (directly or indirectly)" : "";
  if (matches.length === 0) {
    return `No classes deriving from ${identifier}${how} found.${absent(result)}`;
  }
  return pagedEntries(
    `Found ${matches.length} classes deriving from ${identifier}${how}:\n`,
    matches.length,
    (i) => {
      const m = matches[i];
      const where = m.symbol
        ? `${m.file}:${m.symbol.startLine}-${m.symbol.endLine}`
        : `${m.file}:${m.line}`;
      const via = m.depth > 1 ? `, via ${m.base}` : "";
      const defined = m.symbol ? "" : " (definition not indexed)";
      const notes: string[] = [];
      if (m.impl && m.symbol) notes.push(`impl at ${m.impl.path}:${m.impl.line}`);
      if (m.ambiguous) {
        notes.push(
          `ambiguous: ${m.ambiguous} definitions are named ${m.name} and the impl's file names none of them`,
        );
      }
      const note = notes.length > 0 ? ` (${notes.join("; ")})` : "";
      let output = `${i + 1}. ${where} ${
        m.symbol?.subkind ?? "class"
      } ${m.name}${via}${defined}${note}\n`;
      if (printBody && m.body !== undefined) output += `${m.body}\n\n`;
      return output;
    },
    page,
  );
}

/** The JSON form of an edge search (for `deft ckg search-* --json`); a `page` lists part of it. */
export function edgeJson(result: EdgeResult, page?: Page): Record<string, unknown> {
  const symbol = (s: SymbolRow | undefined) =>
    s
      ? {
        kind: s.kind,
        name: s.name,
        class_name: s.className,
        path: s.path,
        start_line: s.startLine,
        end_line: s.endLine,
      }
      : null;
  const base = {
    command: result.command,
    identifier: result.identifier,
    ...(result.absent ? { absent: { ...result.absent, note: MISS_MEANING } } : {}),
  };
  // `found` counts every entry; `matches` holds the page's.
  const listed = <T>(items: readonly T[], entry: (item: T) => Record<string, unknown>) => {
    const { items: shown, fields } = pageOf(items, page);
    return { found: items.length, ...fields, matches: shown.map(entry) };
  };
  if (result.command === "search_references") {
    return {
      ...base,
      ...listed(result.references, (m) => ({
        kind: m.ref.kind,
        file: m.file,
        path: m.ref.path,
        line: m.ref.line,
        column: m.ref.column,
        enclosing: symbol(m.enclosing),
        ...(m.text !== undefined ? { text: m.text } : {}),
      })),
    };
  }
  if (result.command === "search_callers") {
    return {
      ...base,
      ...listed(result.callers, (m) => ({
        ...symbol(m.symbol),
        file: m.file,
        call_lines: m.lines,
        ...(m.body !== undefined ? { body: m.body } : {}),
      })),
    };
  }
  return {
    ...base,
    indirect: result.indirect,
    ...listed(result.subclasses, (m) => ({
      name: m.name,
      file: m.file,
      path: m.path,
      line: m.line,
      base: m.base,
      depth: m.depth,
      definition: symbol(m.symbol),
      ...(m.impl ? { impl: m.impl } : {}),
      ...(m.ambiguous ? { ambiguous: m.ambiguous } : {}),
      ...(m.body !== undefined ? { body: m.body } : {}),
    })),
  };
}
