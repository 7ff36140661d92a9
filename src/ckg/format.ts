/**
 * How search results read: Trae Agent's text (`Found N functions named X:` then numbered
 * `file:start-end` entries, clipped at 16,000 characters) for the model and the terminal, and a
 * JSON shape for scripts.
 */
import type { SymbolKind } from "./extract.ts";
import type { SearchCommand, SearchResult } from "./search.ts";

/** Characters of output before the rest is clipped, as in Trae Agent. */
export const OUTPUT_LIMIT = 16_000;

const NOUN: Readonly<Record<SearchCommand, string>> = {
  search_function: "functions",
  search_class: "classes",
  search_class_method: "class methods",
};

const KIND_LABEL: Readonly<Record<SymbolKind, string>> = {
  function: "function",
  method: "class method",
  class: "class",
  field: "field",
  prototype: "declaration",
};

const COMMAND_FOR: Partial<Record<SymbolKind, SearchCommand>> = {
  function: "search_function",
  class: "search_class",
  method: "search_class_method",
};

/** Which entries of a long answer to show: from `offset` (0-based), at most `limit` of them. */
export interface Page {
  offset: number;
  limit?: number;
  /**
   * Whose words the hints use: the `ckg` tool's parameters (`offset=N`, `print_body=false`), or
   * with `cli`, `deft ckg`'s flags (`--offset N`, `--no-body`).
   */
  cli?: boolean;
}

/**
 * The numbered entries of an answer after its `header`, clipped at `OUTPUT_LIMIT` characters. With
 * a `page` (the tool's `offset`/`limit`), only those entries, and the last line says how to get
 * the rest; without one, Trae Agent's text.
 */
export function pagedEntries(
  header: string,
  total: number,
  entry: (index: number) => string,
  page?: Page,
): string {
  const offset = page?.offset ?? 0;
  if (offset >= total && total > 0) {
    const from = page?.cli ? `--offset ${offset}` : `offset=${offset}`;
    return `${header}No entries from ${from}: there are ${total} (offset counts from 0).`;
  }
  const end = Math.min(total, offset + (page?.limit ?? Infinity));
  let output = header;
  for (let i = offset; i < end; i++) {
    output += entry(i);
    if (output.length > OUTPUT_LIMIT) {
      const line = `\n<response clipped> ${total - (i + 1)} more entries not shown`;
      // Entry i is cut: the next page starts with it.
      const how = page ? `; to see them ${again(page, i)}${more(page)}` : "";
      return `${output.slice(0, OUTPUT_LIMIT)}${line}${how}`;
    }
  }
  if (page && end < total) {
    output += `<entries ${offset + 1}-${end} of ${total} shown; ${again(page, end)} ` +
      `for the next ones${more(page)}>\n`;
  }
  return output;
}

/** How to ask for the entries from `offset` on. */
function again(page: Page, offset: number): string {
  return page.cli ? `run again with --offset ${offset}` : `call again with offset=${offset}`;
}

/** How else to shorten an answer. */
function more(page: Page): string {
  return page.cli
    ? " (--no-body shortens each entry; a narrower --path shortens the list)"
    : " (print_body=false shortens each entry; a narrower path shortens the list)";
}

/** Trae-compatible text for `result`; bodies only when `printBody`. A `page` shows part of it. */
export function formatSearchText(result: SearchResult, printBody: boolean, page?: Page): string {
  const noun = NOUN[result.command];
  const { matches, identifier } = result;
  if (matches.length === 0) return formatMiss(result, noun);
  return pagedEntries(
    `Found ${matches.length} ${noun} named ${identifier}:\n`,
    matches.length,
    (i) => {
      const { symbol, file, body, fields, methods } = matches[i];
      let output = `${i + 1}. ${file}:${symbol.startLine}-${symbol.endLine}`;
      if (symbol.kind === "method" && symbol.className) {
        output += ` within class ${symbol.className}`;
      } else if (symbol.kind === "function" && symbol.parentFunction) {
        output += ` within function ${symbol.parentFunction}`;
      }
      output += "\n";
      if (fields && fields.length > 0) output += `Fields:\n${bullets(fields)}\n`;
      if (methods && methods.length > 0) output += `Methods:\n${bullets(methods)}\n`;
      if (printBody && body !== undefined) output += `${body}\n\n`;
      return output;
    },
    page,
  );
}

function bullets(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join("\n");
}

/** What a name no file holds can still be. */
export const MISS_MEANING = "It may still exist as a name the C preprocessor builds (`##` " +
  "pasting, a macro that expands to a definition), one spelled with escapes (`\\u0061`), or one " +
  "in a file type the graph does not parse; a text search (grep) finds the spelled forms.";

/** The line that explains a miss answered at once because nothing holds the name. */
export function absentNote(absent: { name: string; scanned: number }): string {
  return `Nothing under this path defines or uses ${absent.name}: the index has no symbol or ` +
    `use of it, and none of the ${absent.scanned} files not yet indexed holds its bytes, so a ` +
    `complete index would not find it either. ${MISS_MEANING}`;
}

function formatMiss(result: SearchResult, noun: string): string {
  const lines = [`No ${noun} named ${result.identifier} found.`];
  if (result.absent) lines.push(absentNote(result.absent));
  if (result.suggestions.length > 0) {
    const names = result.suggestions.map((s) => {
      const command = COMMAND_FOR[s.kind];
      const hint = command && command !== result.command ? `, use ${command}` : "";
      return `${s.name} (${KIND_LABEL[s.kind]}${hint})`;
    });
    lines.push(`Close names: ${names.join(", ")}.`);
  }
  if (result.unindexed.length > 0) {
    const shown = result.unindexed.slice(0, 5).map((f) => `${f.path} (${f.status}: ${f.note})`);
    const more = result.unindexed.length - shown.length;
    lines.push(
      `Not indexed under this path: ${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}.`,
    );
  }
  return lines.join("\n");
}

/**
 * The entries of a JSON answer a `page` asks for, and the fields that say which they are
 * (`offset`, and `next_offset` while more follow); every entry without one.
 */
export function pageOf<T>(items: readonly T[], page?: Page): {
  items: readonly T[];
  fields: Record<string, number>;
} {
  if (!page) return { items, fields: {} };
  const end = Math.min(items.length, page.offset + (page.limit ?? Infinity));
  const shown = items.slice(page.offset, end);
  return {
    items: shown,
    fields: { offset: page.offset, ...(end < items.length ? { next_offset: end } : {}) },
  };
}

/** The JSON form of `result` (for `deft ckg search --json`); a `page` lists part of it. */
export function searchJson(
  result: SearchResult,
  root: string,
  page?: Page,
): Record<string, unknown> {
  const { items, fields } = pageOf(result.matches, page);
  return {
    command: result.command,
    identifier: result.identifier,
    found: result.matches.length,
    ...fields,
    matches: items.map(({ symbol, file, body, fields, methods }) => ({
      kind: symbol.kind,
      subkind: symbol.subkind,
      name: symbol.name,
      file,
      path: symbol.path,
      language: symbol.language,
      start_line: symbol.startLine,
      end_line: symbol.endLine,
      class_name: symbol.className,
      parent_function: symbol.parentFunction,
      signature: symbol.signature,
      ...(fields ? { fields } : {}),
      ...(methods ? { methods } : {}),
      ...(body !== undefined ? { body } : {}),
    })),
    suggestions: result.suggestions,
    ...(result.absent ? { absent: { ...result.absent, note: MISS_MEANING } } : {}),
    not_indexed: result.unindexed.map((f) => ({
      file: `${root}/${f.path}`,
      status: f.status,
      reason: f.note,
    })),
  };
}
