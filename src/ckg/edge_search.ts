/**
 * Searches along the graph's edges: where a name is used, which functions call it, which classes
 * derive from it (directly, or with `indirect` through classes that derive from those).
 */
import { decodeSource } from "./content.ts";
import type { RefKind } from "./edges.ts";
import { LANGUAGES } from "./languages.ts";
import type { GraphStore, RefRow, SymbolRow } from "./store.ts";
import { type ModulePath, rustModuleOf, sameModule, usedNames } from "./rust_modules.ts";

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
  /** Read texts and bodies from this match on (0-based): the first one a page shows. */
  bodyFrom?: number;
  /** Subclasses: also classes deriving from subclasses, at any depth. */
  indirect?: boolean;
}

/** One use of the name. */
export interface ReferenceMatch {
  ref: RefRow;
  file: string;
  /**
   * The innermost function, method or class around it; in an anonymous function that no named
   * function encloses, that function (named `<anonymous>`, id below zero, in its class if any).
   */
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
  /**
   * The deriving class's file (for an `impl` whose type is not indexed: the impl's) and the line
   * where it is defined or the base is named.
   */
  file: string;
  path: string;
  line: number;
  /** For Rust's `impl Trait for Type`: where the impl is. */
  impl?: { path: string; line: number };
  /**
   * Set when the impl's type has several definitions none of which its file clearly sees: how
   * many there are (each is listed with its own file).
   */
  ambiguous?: number;
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
  /**
   * Names whose files the answer depends on besides the identifier: indirect subclasses, and the
   * types Rust impls name (their definitions say where each one is).
   */
  follow: string[];
  /** Set on a miss no file holds (see `SearchResult.absent`). */
  absent?: { name: string; scanned: number };
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
      const named = ref.symbolId === null ? undefined : symbolOf(ref.symbolId);
      // As for callers: in an anonymous function no named function encloses, that function.
      const enclosing = isFunction(named) ? named : anonymousCaller(ref, named) ?? named;
      result.references.push({ ref, file: `${root}/${ref.path}`, enclosing });
    }
    let used = 0;
    for (const match of result.references.slice(options.bodyFrom ?? 0)) {
      if (used > (options.bodyBudget ?? Infinity)) break;
      const text = await texts.get(match.ref.path);
      match.text = text === undefined ? undefined : lineAt(text, match.ref.startOffset).trim();
      used += (match.text?.length ?? 0) + match.file.length + 40;
    }
    return result;
  }
  if (command === "search_callers") {
    const byFunction = new Map<string, CallerMatch>();
    for (const ref of store.refsNamed(identifier, ["call"], scope)) {
      const named = ref.symbolId === null ? undefined : symbolOf(ref.symbolId);
      const symbol = isFunction(named) ? named : anonymousCaller(ref, named);
      // A call at the top level of a file (or in a class body) has no caller.
      if (!symbol) continue;
      const key = symbol.id >= 0 ? `s${symbol.id}` : `${symbol.path}:${symbol.startOffset}`;
      let match = byFunction.get(key);
      if (!match) {
        match = { symbol, file: `${root}/${symbol.path}`, lines: [] };
        byFunction.set(key, match);
      }
      if (!match.lines.includes(ref.line)) match.lines.push(ref.line);
    }
    result.callers = [...byFunction.values()];
    if (options.body) {
      await readBodies(texts, result.callers.slice(options.bodyFrom ?? 0), options.bodyBudget);
    }
    return result;
  }
  // Subclasses: breadth first from the identifier, each class listed once.
  const seen = new Set<string>([identifier]);
  // The types Rust impls name: a partial index must hold their definitions too.
  const implTypes = new Set<string>();
  const listed = new Set<string>();
  let frontier = [identifier];
  for (let depth = 1; frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const base of frontier) {
      for (const ref of store.refsNamed(base, ["base"], scope)) {
        if (ref.derived !== null) implTypes.add(ref.derived);
        const matches = await derivedFrom(store, texts, root, scope, ref, base, depth, symbolOf);
        for (const match of matches) {
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
  const follow = new Set(result.indirect ? seen : []);
  for (const name of implTypes) follow.add(name);
  follow.delete(identifier);
  result.follow = [...follow];
  if (options.body) {
    const shown = result.subclasses.slice(options.bodyFrom ?? 0);
    await readBodies(texts, shown.filter((m) => m.symbol), options.bodyBudget);
  }
  return result;
}

/** The classes one base reference makes subclasses. */
async function derivedFrom(
  store: GraphStore,
  texts: TextCache,
  root: string,
  scope: string,
  ref: RefRow,
  base: string,
  depth: number,
  symbolOf: (id: number) => SymbolRow | undefined,
): Promise<SubclassMatch[]> {
  const at = { file: `${root}/${ref.path}`, path: ref.path, line: ref.line, base, depth };
  if (ref.derived !== null) {
    // `impl Trait for Type`: the type's definitions the impl's file can see. Each is reported at
    // its own file, with the impl's place beside it.
    const family = familyOf(ref.language);
    const classes = store.symbolsNamed(ref.derived, ["class"], scope).filter((c) =>
      familyOf(c.language) === family
    );
    const impl = { path: ref.path, line: ref.line };
    if (classes.length === 0) return [{ ...at, name: ref.derived, impl }];
    const seen = await visibleFrom(store, texts, scope, ref, classes);
    const ambiguous = seen.length > 1 ? seen.length : undefined;
    return seen.map((symbol) => ({
      file: `${root}/${symbol.path}`,
      path: symbol.path,
      line: symbol.startLine,
      base,
      depth,
      symbol,
      name: symbol.name,
      impl,
      ambiguous,
    }));
  }
  if (ref.symbolId === null) return [];
  const symbol = symbolOf(ref.symbolId);
  if (!symbol || symbol.kind !== "class") return [];
  return [{ ...at, symbol, name: symbol.name }];
}

/**
 * Of the definitions named like an impl's type, the ones its file can see: one in the same file;
 * else the ones its `use` lines bring in by name (`use crate::shapes::Circle`, `use super::Circle`,
 * `use self::a::{Circle}`), else by a glob (`use crate::shapes::*`, `use super::*`), resolved to
 * files through the crate's module tree (see `rust_modules.ts`); without a crate root above the
 * file, the ones whose module (file stem) its `use` lines name; else the only one in its own
 * folder; else all of them, which the answer then marks as ambiguous.
 */
async function visibleFrom(
  store: GraphStore,
  texts: TextCache,
  scope: string,
  ref: RefRow,
  classes: SymbolRow[],
): Promise<SymbolRow[]> {
  const sameFile = classes.filter((c) => c.path === ref.path);
  if (sameFile.length > 0 || classes.length === 1) return sameFile.length > 0 ? sameFile : classes;
  const here = rustModuleOf(ref.path, texts.isFile);
  if (here) {
    const text = await texts.get(ref.path);
    const uses = text === undefined ? [] : usedNames(text, here);
    const moduleOf = memo((c: SymbolRow) => rustModuleOf(c.path, texts.isFile));
    const from = (modules: ModulePath[], c: SymbolRow) => {
      const module = moduleOf(c);
      return module !== undefined && modules.some((m) => sameModule(m, module));
    };
    const named = classes.filter((c) =>
      uses.some((u) => u.name === ref.derived && u.local === u.name && from(u.modules, c))
    );
    if (named.length > 0) return named;
    const globbed = classes.filter((c) => uses.some((u) => u.name === "*" && from(u.modules, c)));
    if (globbed.length > 0) return globbed;
  } else {
    const named = await namedByStem(store, texts, scope, ref, classes);
    if (named.length > 0) return named;
  }
  const folder = (path: string) => path.slice(0, path.lastIndexOf("/") + 1);
  const sameFolder = classes.filter((c) => folder(c.path) === folder(ref.path));
  return sameFolder.length === 1 ? sameFolder : classes;
}

/** Without a crate root: the definitions whose file stem is the module a `use` names the type from. */
async function namedByStem(
  store: GraphStore,
  texts: TextCache,
  scope: string,
  ref: RefRow,
  classes: SymbolRow[],
): Promise<SymbolRow[]> {
  const imports = store.refsNamed(ref.derived!, ["import"], scope).filter((r) =>
    r.path === ref.path
  );
  if (imports.length === 0) return [];
  const text = await texts.get(ref.path);
  const modules = new Set<string>();
  for (const use of imports) {
    if (text === undefined) break;
    // The module is the path segment before the name: `a::b::{C, D}` or `a::b::C`.
    const before = text.slice(Math.max(0, use.startOffset - 400), use.startOffset);
    const m = /(\w+)\s*::\s*(?:\{[^}]*)?$/.exec(before);
    if (m) modules.add(m[1]);
  }
  return classes.filter((c) => modules.has(moduleOf(c.path)));
}

/** The Rust module a file defines: its stem, or its folder's name for mod.rs, lib.rs, main.rs. */
function moduleOf(path: string): string {
  const parts = path.replace(/\.rs$/, "").split("/");
  const stem = parts[parts.length - 1];
  if (stem === "mod") return parts[parts.length - 2] ?? "crate";
  if (stem === "lib" || stem === "main") return "crate";
  return stem;
}

function isFunction(symbol: SymbolRow | undefined): symbol is SymbolRow {
  return symbol !== undefined && (symbol.kind === "function" || symbol.kind === "method");
}

/** The name an anonymous caller is reported under. */
export const ANONYMOUS = "<anonymous>";

/**
 * The anonymous function a call sits in when no named function encloses it, as a symbol of its
 * own (id below zero: it is not stored), in the class around it if any.
 */
function anonymousCaller(ref: RefRow, around: SymbolRow | undefined): SymbolRow | undefined {
  if (ref.anonStart === null || ref.anonEnd === null) return undefined;
  return {
    id: -1,
    fileId: -1,
    path: ref.path,
    language: ref.language,
    kind: around ? "method" : "function",
    subkind: null,
    name: ANONYMOUS,
    className: around?.name ?? null,
    parentFunction: null,
    parentId: null,
    startLine: ref.anonStartLine ?? ref.line,
    endLine: ref.anonEndLine ?? ref.line,
    startOffset: ref.anonStart,
    endOffset: ref.anonEnd,
    signature: "",
  };
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

/** File texts read once per search, and which paths are files. */
class TextCache {
  readonly #texts = new Map<string, Promise<string | undefined>>();
  readonly #files = new Map<string, boolean>();
  constructor(readonly root: string) {}

  /** Whether the workspace-relative `path` is a file (a crate root, for `rust_modules.ts`). */
  readonly isFile = (path: string): boolean => {
    let known = this.#files.get(path);
    if (known === undefined) {
      try {
        known = Deno.statSync(`${this.root}/${path}`).isFile;
      } catch {
        known = false;
      }
      this.#files.set(path, known);
    }
    return known;
  };

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
