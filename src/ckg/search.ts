/**
 * Lookups by exact name, with what a reader needs around each match: the body (read back from
 * the file, which the refresh just verified), a class's fields and methods, and close names when
 * nothing matches.
 */
import { decodeSource } from "./content.ts";
import type { SymbolKind } from "./extract.ts";
import { LANGUAGES } from "./languages.ts";
import type { FileRow, GraphStore, SymbolRow } from "./store.ts";

/** The three searches of the `ckg` tool. */
export type SearchCommand = "search_function" | "search_class" | "search_class_method";

const KIND_OF: Readonly<Record<SearchCommand, SymbolKind>> = {
  search_function: "function",
  search_class: "class",
  search_class_method: "method",
};

const SEARCHABLE: readonly SymbolKind[] = ["function", "class", "method"];

/** One match with its file (absolute) and, as asked, its body and members. */
export interface SearchMatch {
  symbol: SymbolRow;
  file: string;
  body?: string;
  /** Classes: field declarations, in source order. */
  fields?: string[];
  /** Classes: method signatures, declared in the class body or (Go, Rust, C++) outside it. */
  methods?: string[];
}

/** A name that exists, of some kind, offered when the asked name does not. */
export interface Suggestion {
  name: string;
  kind: SymbolKind;
}

/** The outcome of one search. */
export interface SearchResult {
  command: SearchCommand;
  identifier: string;
  matches: SearchMatch[];
  suggestions: Suggestion[];
  /** When nothing matched: files under the scope that were not indexed, and why. */
  unindexed: FileRow[];
  /**
   * Set on a miss answered before the index was complete, because no file holds the name: the
   * name looked for (the member of `Cls.method`) and how many not yet indexed files were read
   * for it.
   */
  absent?: { name: string; scanned: number };
}

/** How to search. */
export interface SearchOptions {
  /** Read each match's source text. */
  body: boolean;
  /**
   * Stop reading bodies once this many characters of them are in hand (output is clipped there
   * anyway): the match that crosses it still gets its body, later ones get none.
   */
  bodyBudget?: number;
  /** Read bodies from this match on (0-based): the first one a page shows. */
  bodyFrom?: number;
}

/**
 * Searches `store` for `identifier` under `scope` (relative to `root`, "" for everything).
 * `Cls.method` (or `Cls::method`, `Cls#method`) finds the method of that class.
 */
export async function searchGraph(
  store: GraphStore,
  root: string,
  scope: string,
  command: SearchCommand,
  identifier: string,
  options: SearchOptions,
): Promise<SearchResult> {
  const kind = KIND_OF[command];
  let symbols = store.symbolsNamed(identifier, [kind], scope);
  const qualified = splitMember(identifier);
  if (symbols.length === 0 && qualified && kind === "method") {
    symbols = store.symbolsNamed(qualified.member, ["method"], scope).filter((s) =>
      s.className === qualified.owner
    );
  }
  const matches = await describe(store, root, symbols, options);
  if (matches.length > 0) {
    return { command, identifier, matches, suggestions: [], unindexed: [] };
  }
  return {
    command,
    identifier,
    matches,
    suggestions: suggest(store, scope, identifier, kind),
    unindexed: store.unindexedFiles(scope),
  };
}

function splitMember(identifier: string): { owner: string; member: string } | undefined {
  const m = /^(?:.*(?:\.|::))?([^.:#\s]+)(?:\.|::|#)([^.:#\s]+)$/.exec(identifier);
  return m ? { owner: m[1], member: m[2] } : undefined;
}

async function describe(
  store: GraphStore,
  root: string,
  symbols: readonly SymbolRow[],
  options: SearchOptions,
): Promise<SearchMatch[]> {
  const texts = new Map<string, Promise<string | undefined>>();
  const textOf = (path: string) => {
    let text = texts.get(path);
    if (!text) {
      text = Deno.readFile(`${root}/${path}`).then(decodeSource, () => undefined);
      texts.set(path, text);
    }
    return text;
  };
  const matches: SearchMatch[] = symbols.map((symbol) => {
    const match: SearchMatch = { symbol, file: `${root}/${symbol.path}` };
    if (symbol.kind === "class") Object.assign(match, classMembers(store, symbol));
    return match;
  });
  if (!options.body) return matches;
  const budget = options.bodyBudget ?? Infinity;
  let used = 0;
  const from = options.bodyFrom ?? 0;
  let wanted = from;
  while (wanted < matches.length && used <= budget) {
    const { startOffset, endOffset } = matches[wanted++].symbol;
    used += endOffset - startOffset;
  }
  await Promise.all(
    matches.slice(from, wanted).map(async (match) => {
      const text = await textOf(match.symbol.path);
      match.body = text === undefined
        ? "(the file can no longer be read)"
        : text.slice(match.symbol.startOffset, match.symbol.endOffset);
    }),
  );
  return matches;
}

function familyOf(language: string): string {
  return LANGUAGES[language as keyof typeof LANGUAGES]?.family ?? language;
}

function directoryOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/**
 * A class's fields and methods: members declared in its body, then methods that name the class
 * from outside it (Go receivers, Rust impl blocks, C++ `Cls::m`, `Cls.prototype.m`) in the same
 * language family. When several classes share the name, outside methods go to the class in
 * their own folder.
 */
function classMembers(
  store: GraphStore,
  cls: SymbolRow,
): { fields: string[]; methods: string[] } {
  const fields: string[] = [];
  const methods: string[] = [];
  const inBody = new Set<string>();
  for (const member of store.membersOf(cls.id)) {
    if (member.kind === "field") fields.push(member.signature);
    else {
      methods.push(member.signature);
      inBody.add(member.name);
    }
  }
  const family = familyOf(cls.language);
  const outside = store.methodsOfClassName(cls.name).filter((m) =>
    m.parentId === null && familyOf(m.language) === family && !inBody.has(m.name)
  );
  if (outside.length > 0) {
    const namesakes = store.classesNamed(cls.name).filter((c) => familyOf(c.language) === family);
    const here = directoryOf(cls.path);
    for (const method of outside) {
      if (namesakes.length === 1 || directoryOf(method.path) === here) {
        methods.push(method.signature);
      }
    }
  }
  return { fields, methods };
}

const SUGGESTION_LIMIT = 5;

/** Up to five existing names close to `identifier`, best first. */
function suggest(
  store: GraphStore,
  scope: string,
  identifier: string,
  kind: SymbolKind,
): Suggestion[] {
  const ranked = new Map<string, { suggestion: Suggestion; rank: number }>();
  const offer = (suggestion: Suggestion, rank: number) => {
    const key = `${suggestion.kind}\0${suggestion.name}`;
    const seen = ranked.get(key);
    if (!seen || rank < seen.rank) ranked.set(key, { suggestion, rank });
  };
  const probes = [identifier];
  const qualified = splitMember(identifier);
  if (qualified) probes.push(qualified.member);
  const enough = () =>
    [...ranked.values()].filter(({ suggestion: s }) => !(s.name === identifier && s.kind === kind))
      .length >= SUGGESTION_LIMIT;
  // The indexed lookups first; the scan (other case, misspellings, substrings) only when they
  // leave room.
  for (const probe of probes) {
    // The same name as another kind: the likeliest slip is the wrong command.
    for (const other of SEARCHABLE) {
      if (
        store.symbolsNamed(probe, [other], scope).length > 0 &&
        !(probe === identifier && other === kind)
      ) {
        offer({ name: probe, kind: other }, 0);
      }
    }
    for (const row of store.namesStartingWith(probe, SEARCHABLE, scope, 50)) {
      offer(row, 2 + (row.name.length - probe.length) / 1000);
    }
  }
  if (!enough()) {
    for (const probe of probes) {
      const lower = probe.toLowerCase();
      const max = lower.length <= 4 ? 1 : lower.length <= 8 ? 2 : 3;
      for (const row of store.namesNear(probe, SEARCHABLE, scope, max, 50_000)) {
        const other = row.name.toLowerCase();
        if (other === lower) {
          offer(row, 1);
          continue;
        }
        const d = editDistance(lower, other, max);
        if (d <= max) offer(row, 3 + d);
        else if (lower.length >= 3 && other.includes(lower)) {
          offer(row, 7 + Math.abs(row.name.length - probe.length) / 1000);
        }
      }
    }
  }
  return [...ranked.values()]
    .filter(({ suggestion }) => !(suggestion.name === identifier && suggestion.kind === kind))
    .sort((a, b) =>
      a.rank - b.rank ||
      (a.suggestion.kind === kind ? 0 : 1) - (b.suggestion.kind === kind ? 0 : 1) ||
      a.suggestion.name.localeCompare(b.suggestion.name)
    )
    .slice(0, SUGGESTION_LIMIT)
    .map(({ suggestion }) => suggestion);
}

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);

/** Levenshtein distance, giving up (returning `max + 1`) once it must exceed `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rowA.length <= b.length) {
    rowA = new Int32Array(b.length * 2 + 1);
    rowB = new Int32Array(b.length * 2 + 1);
  }
  let previous = rowA;
  let current = rowB;
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let best = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      current[j] = value;
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    [previous, current] = [current, previous];
  }
  return previous[b.length];
}
