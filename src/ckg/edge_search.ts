/**
 * Searches along the graph's edges: where a name is used, which functions call it, which classes
 * derive from it (directly, or with `indirect` through classes that derive from those).
 */
import { decodeSource } from "./content.ts";
import type { RefKind } from "./edges.ts";
import { LANGUAGES } from "./languages.ts";
import type { GraphStore, RefRow, SymbolRow } from "./store.ts";

/** The edge searches of the `ckg` tool. */
export type EdgeCommand = "search_references" | "search_callers" | "search_subclasses";

/** The edge commands, for validation. */
export const EDGE_COMMANDS: readonly EdgeCommand[] = [
  "search_references",
  "search_callers",
  "search_subclasses",
];

/** How to search edges. */
export interface EdgeOptions {
  /** Callers and subclasses: read each one's source text. */
  body: boolean;
  /** Stop reading bodies past this many characters (output is clipped there anyway). */
  bodyBudget?: number;
  /** Subclasses: also classes deriving from subclasses, at any depth. */
  indirect?: boolean;
}

/** One use of the name. */
export interface ReferenceMatch {
  ref: RefRow;
  file: string;
  /** The innermost function, method or class around it. */
  enclosing?: SymbolRow;
  /** The source line, trimmed. */
  text?: string;
}

/** One function whose body calls the name. */
export interface CallerMatch {
  symbol: SymbolRow;
  file: string;
  /** Lines of the calls inside it. */
  lines: number[];
  body?: string;
}

/** One class deriving from the name (or, with `indirect`, from one of its subclasses). */
export interface SubclassMatch {
  /** The deriving class, when the graph holds its definition. */
  symbol?: SymbolRow;
  /** Its name. */
  name: string;
  /** Where the base is named: the class's file, or the `impl` block. */
  file: string;
  path: string;
  line: number;
  /** The class it names as a base. */
  base: string;
  /** 1 for a direct subclass, 2 for a subclass of one, … */
  depth: number;
  body?: string;
}

/** The outcome of one edge search. */
export interface EdgeResult {
  command: EdgeCommand;
  identifier: string;
  indirect: boolean;
  references: ReferenceMatch[];
  callers: CallerMatch[];
  subclasses: SubclassMatch[];
  /** Names whose files the answer depends on besides the identifier (indirect subclasses). */
  follow: string[];
}

const REFERENCE_KINDS: readonly RefKind[] = ["call", "attr", "import", "base"];

/** Runs an edge search over `store` under `scope`. */
export async function searchEdges(
  store: GraphStore,
  root: string,
  scope: string,
  command: EdgeCommand,
  identifier: string,
  options: EdgeOptions,
): Promise<EdgeResult> {
  const result: EdgeResult = {
    command,
    identifier,
    indirect: command === "search_subclasses" && options.indirect === true,
    references: [],
    callers: [],
    subclasses: [],
    follow: [],
  };
  const texts = new TextCache(root);
  const symbolOf = memo((id: number) => store.symbolById(id));
  if (command === "search_references") {
    for (const ref of store.refsNamed(identifier, REFERENCE_KINDS, scope)) {
      const enclosing = ref.symbolId === null ? undefined : symbolOf(ref.symbolId);
      result.references.push({ ref, file: `${root}/${ref.path}`, enclosing });
    }
    let used = 0;
    for (const match of result.references) {
      if (used > (options.bodyBudget ?? Infinity)) break;
      const text = await texts.get(match.ref.path);
      match.text = text === undefined ? undefined : lineAt(text, match.ref.startOffset).trim();
      used += (match.text?.length ?? 0) + match.file.length + 40;
    }
    return result;
  }
  if (command === "search_callers") {
    const byFunction = new Map<number, CallerMatch>();
    for (const ref of store.refsNamed(identifier, ["call"], scope)) {
      if (ref.symbolId === null) continue;
      const symbol = symbolOf(ref.symbolId);
      if (!symbol || (symbol.kind !== "function" && symbol.kind !== "method")) continue;
      let match = byFunction.get(symbol.id);
      if (!match) {
        match = { symbol, file: `${root}/${symbol.path}`, lines: [] };
        byFunction.set(symbol.id, match);
      }
      if (!match.lines.includes(ref.line)) match.lines.push(ref.line);
    }
    result.callers = [...byFunction.values()];
    if (options.body) await readBodies(texts, result.callers, options.bodyBudget);
    return result;
  }
  // Subclasses: breadth first from the identifier, each class listed once.
  const seen = new Set<string>([identifier]);
  const listed = new Set<string>();
  let frontier = [identifier];
  for (let depth = 1; frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const base of frontier) {
      for (const ref of store.refsNamed(base, ["base"], scope)) {
        for (const match of derivedFrom(store, root, scope, ref, base, depth, symbolOf)) {
          const key = match.symbol ? `s${match.symbol.id}` : `${match.path}:${match.line}`;
          if (listed.has(key)) continue;
          listed.add(key);
          result.subclasses.push(match);
          if (!seen.has(match.name)) {
            seen.add(match.name);
            next.push(match.name);
          }
        }
      }
    }
    if (!result.indirect) break;
    frontier = next;
  }
  result.follow = result.indirect ? [...seen].filter((name) => name !== identifier) : [];
  if (options.body) {
    await readBodies(texts, result.subclasses.filter((m) => m.symbol), options.bodyBudget);
  }
  return result;
}

/** The classes one base reference makes subclasses. */
function derivedFrom(
  store: GraphStore,
  root: string,
  scope: string,
  ref: RefRow,
  base: string,
  depth: number,
  symbolOf: (id: number) => SymbolRow | undefined,
): SubclassMatch[] {
  const at = { file: `${root}/${ref.path}`, path: ref.path, line: ref.line, base, depth };
  if (ref.derived !== null) {
    // `impl Trait for Type`: the type's definitions, in the same language family.
    const family = familyOf(ref.language);
    const classes = store.symbolsNamed(ref.derived, ["class"], scope).filter((c) =>
      familyOf(c.language) === family
    );
    if (classes.length === 0) return [{ ...at, name: ref.derived }];
    return classes.map((symbol) => ({ ...at, symbol, name: symbol.name }));
  }
  if (ref.symbolId === null) return [];
  const symbol = symbolOf(ref.symbolId);
  if (!symbol || symbol.kind !== "class") return [];
  return [{ ...at, symbol, name: symbol.name }];
}

function familyOf(language: string): string {
  return LANGUAGES[language as keyof typeof LANGUAGES]?.family ?? language;
}

function memo<K, V>(fn: (key: K) => V): (key: K) => V {
  const cache = new Map<K, V>();
  return (key) => {
    if (!cache.has(key)) cache.set(key, fn(key));
    return cache.get(key)!;
  };
}

/** File texts read once per search. */
class TextCache {
  readonly #texts = new Map<string, Promise<string | undefined>>();
  constructor(readonly root: string) {}

  get(path: string): Promise<string | undefined> {
    let text = this.#texts.get(path);
    if (!text) {
      text = Deno.readFile(`${this.root}/${path}`).then(decodeSource, () => undefined);
      this.#texts.set(path, text);
    }
    return text;
  }
}

async function readBodies(
  texts: TextCache,
  matches: { symbol?: SymbolRow; body?: string }[],
  budget = Infinity,
): Promise<void> {
  let used = 0;
  for (const match of matches) {
    if (!match.symbol || used > budget) continue;
    const text = await texts.get(match.symbol.path);
    match.body = text === undefined
      ? "(the file can no longer be read)"
      : text.slice(match.symbol.startOffset, match.symbol.endOffset);
    used += match.body.length;
  }
}

function lineAt(text: string, offset: number): string {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const end = text.indexOf("\n", offset);
  return text.slice(start, end < 0 ? text.length : end);
}
