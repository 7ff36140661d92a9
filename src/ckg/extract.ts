/**
 * Turns the captures of one file into symbols: names, kinds, parents, line ranges, signatures.
 *
 * The queries in `queries/` speak this capture protocol:
 * - `@def.function`, `@def.method`, `@def.class[.<subkind>]`, `@def.field`, `@def.prototype`
 *   mark a definition node; `@scope` marks a container that is not itself a definition (a Rust
 *   `impl`, a Java anonymous class) but gives the functions inside it a class.
 * - `@name` is the name node; `@declarator` is a C declarator to read the name from when no
 *   pattern could reach the name node; `@class` names the owning class explicitly (Go receivers,
 *   `Cls.prototype.m = ...`); `@body` is the body, so the signature is the text before it.
 * - `@outer` is a wrapper (decorators, `export`, `const`, `template <...>`, `type`) whose range is
 *   shown instead of the definition's when no other definition shares that wrapper. A pattern
 *   that only adds a wrapper marks the definition node `@wrapped` instead of `@def.*`.
 * - Captures starting with `_` only serve predicates.
 *
 * Matches for the same node merge; a function a pattern marks as a method stays a method, a field
 * that holds a function becomes a method, a C++ member prototype is not a data field.
 * Parents come from nesting: a function directly inside a class (or scope) is a method of it, a
 * function inside a function is nested in it.
 */
import { CAPTURE_STRIDE, type CaptureResult } from "./capture.ts";
import type { GrammarId } from "./languages.ts";

/** What a symbol is. `prototype` (a C++ member declared but defined elsewhere) is never searched. */
export type SymbolKind = "function" | "method" | "class" | "field" | "prototype";

/** One definition found in a file. */
export interface ExtractedSymbol {
  kind: SymbolKind;
  /** For classes: class, struct, interface, enum, trait, union, record, type, annotation. */
  subkind: string | null;
  name: string;
  /** Methods, fields and prototypes: the class they belong to. */
  className: string | null;
  /** Nested functions: the function they are defined in. */
  parentFunction: string | null;
  /** Index (in the returned array) of the enclosing class or function, or -1. */
  parent: number;
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  /** UTF-16 offsets into the decoded text; the body is `text.slice(startOffset, endOffset)`. */
  startOffset: number;
  endOffset: number;
  /** The header (for functions and classes) or declaration (for fields), on one line. */
  signature: string;
}

type Role = "function" | "method" | "class" | "field" | "prototype" | "scope";

const RANK: Readonly<Record<Role, number>> = {
  field: 1,
  prototype: 2,
  function: 3,
  method: 4,
  class: 5,
  scope: 6,
};

const CONTAINERS: ReadonlySet<Role> = new Set(["function", "method", "class", "scope"]);

interface Range {
  start: number;
  end: number;
  startRow: number;
  startCol: number;
  endRow: number;
  endCol: number;
}

interface Def {
  node: Range;
  role?: Role;
  subkind?: string;
  name?: Range;
  declarator?: Range;
  cls?: Range;
  body?: Range;
  outer?: Range;
}

interface Resolved {
  def: Def;
  role: Role;
  name: string;
  /** Class named by the definition itself (receiver, qualifier, prototype object). */
  ownClass: string | null;
  /** Index in the output, when emitted. */
  out: number;
}

const SIGNATURE_LIMIT = 200;

/** Extracts the symbols of a file of language `lang` from its captures. */
export function extractSymbols(
  lang: GrammarId,
  text: string,
  capture: CaptureResult,
): ExtractedSymbol[] {
  const defs = collectDefs(capture);
  const resolved: Resolved[] = [];
  for (const def of defs) {
    const r = resolveName(lang, text, def);
    if (r) resolved.push(r);
  }
  resolved.sort((a, b) => a.def.node.start - b.def.node.start || b.def.node.end - a.def.node.end);

  const symbols: ExtractedSymbol[] = [];
  const stack: Resolved[] = [];
  for (const item of resolved) {
    const { node } = item.def;
    while (stack.length > 0 && stack[stack.length - 1].def.node.end <= node.start) stack.pop();
    const container = stack.length > 0 ? stack[stack.length - 1] : undefined;
    const symbol = toSymbol(lang, text, item, container);
    if (symbol) {
      item.out = symbols.length;
      symbols.push(symbol);
    }
    if (CONTAINERS.has(item.role)) stack.push(item);
  }
  return symbols;
}

function collectDefs(capture: CaptureResult): Def[] {
  const { names, data } = capture;
  const byNode = new Map<string, Def>();
  const outerClaims = new Map<string, Set<string>>();
  let at = 0;
  while (at < data.length) {
    const count = data[at++];
    let node: Range | undefined;
    let role: Role | undefined;
    let subkind: string | undefined;
    let name: Range | undefined;
    let declarator: Range | undefined;
    let cls: Range | undefined;
    let body: Range | undefined;
    let outer: Range | undefined;
    for (let i = 0; i < count; i++, at += CAPTURE_STRIDE) {
      const captureName = names[data[at]] ?? "";
      const range: Range = {
        start: data[at + 1],
        end: data[at + 2],
        startRow: data[at + 3],
        startCol: data[at + 4],
        endRow: data[at + 5],
        endCol: data[at + 6],
      };
      if (captureName === "scope") {
        node = range;
        role = "scope";
      } else if (captureName === "wrapped") {
        node = range;
      } else if (captureName.startsWith("def.")) {
        node = range;
        const [, kind, sub] = captureName.split(".");
        role = kind as Role;
        subkind = sub;
      } else if (captureName === "name") name ??= range;
      else if (captureName === "declarator") declarator ??= range;
      else if (captureName === "class") cls = range;
      else if (captureName === "body") body = range;
      else if (captureName === "outer") outer = range;
    }
    if (!node) continue;
    const key = `${node.start}:${node.end}`;
    let def = byNode.get(key);
    if (!def) {
      def = { node };
      byNode.set(key, def);
    }
    if (outer) {
      def.outer = outer;
      const outerKey = `${outer.start}:${outer.end}`;
      const claims = outerClaims.get(outerKey) ?? new Set<string>();
      claims.add(key);
      outerClaims.set(outerKey, claims);
    }
    if (!role) continue;
    if (!def.role || RANK[role] > RANK[def.role]) {
      def.role = role;
      def.subkind = subkind;
    } else if (role === def.role && subkind && (!def.subkind || def.subkind === "type")) {
      def.subkind = subkind;
    }
    def.name ??= name;
    def.declarator ??= declarator;
    def.cls ??= cls;
    def.body ??= body;
  }
  // A named function expression that a binding already names (`const f = function g() {}`)
  // is known by the binding's name alone: it shares the binding's body.
  const boundBodies = new Set<string>();
  for (const def of byNode.values()) {
    if (def.body && def.subkind !== "expression") {
      boundBodies.add(`${def.body.start}:${def.body.end}`);
    }
  }
  const defs: Def[] = [];
  for (const def of byNode.values()) {
    if (!def.role) continue;
    if (
      def.subkind === "expression" && def.body &&
      boundBodies.has(`${def.body.start}:${def.body.end}`)
    ) continue;
    if (def.outer && outerClaims.get(`${def.outer.start}:${def.outer.end}`)!.size > 1) {
      def.outer = undefined;
    }
    defs.push(def);
  }
  return defs;
}

const C_STATEMENT_KEYWORDS = new Set([
  "if",
  "else",
  "switch",
  "case",
  "default",
  "while",
  "do",
  "for",
  "return",
  "goto",
  "sizeof",
  "break",
  "continue",
]);

function resolveName(lang: GrammarId, text: string, def: Def): Resolved | undefined {
  const role = def.role!;
  const raw = def.name
    ? text.slice(def.name.start, def.name.end)
    : def.declarator
    ? text.slice(def.declarator.start, def.declarator.end)
    : "";
  let name = raw.trim();
  let ownClass = def.cls ? baseTypeName(text.slice(def.cls.start, def.cls.end)) : null;
  if (lang === "c" || lang === "cpp") {
    name = cName(name);
    const qualified = splitQualified(name);
    if (qualified.length > 1) {
      name = qualified[qualified.length - 1];
      if (role === "function" || role === "method" || role === "prototype") {
        ownClass = stripTemplateArgs(qualified[qualified.length - 2]);
      }
    }
    if (role === "class" || role === "scope") name = stripTemplateArgs(name);
    // A statement macro on the line before `switch (k) {` (`QUIET` with no semicolon) makes
    // tree-sitter read a definition of a function called `switch`: a keyword never names one,
    // so the block stays part of the function around it.
    if (C_STATEMENT_KEYWORDS.has(name)) return undefined;
  } else if (role === "scope" || role === "class") {
    name = baseTypeName(name);
  } else if (/^["'`]/.test(name)) {
    name = name.slice(1, -1);
  }
  if (name === "") return undefined;
  return { def, role, name, ownClass: ownClass || null, out: -1 };
}

function toSymbol(
  lang: GrammarId,
  text: string,
  item: Resolved,
  container: Resolved | undefined,
): ExtractedSymbol | undefined {
  const { def } = item;
  let kind: SymbolKind;
  let className: string | null = null;
  let parentFunction: string | null = null;
  const inClass = container && (container.role === "class" || container.role === "scope");
  const inFunction = container && (container.role === "function" || container.role === "method");
  switch (item.role) {
    case "scope":
      return undefined;
    case "class":
      kind = "class";
      break;
    case "function":
    case "method":
      if (item.ownClass) {
        kind = "method";
        className = item.ownClass;
      } else if (inClass) {
        kind = "method";
        className = container.name;
      } else {
        kind = "function";
        if (inFunction) parentFunction = container.name;
      }
      break;
    case "field":
    case "prototype":
      if (!inClass || container.role === "scope") return undefined;
      kind = item.role;
      className = item.ownClass ?? container.name;
      break;
  }
  let shown = def.outer ?? def.node;
  let signatureStart = def.node.start;
  if (
    (lang === "c" || lang === "cpp") && (kind === "function" || kind === "method") && !def.outer
  ) {
    shown = withLeadingMacros(text, shown);
    signatureStart = shown.start;
  }
  const startLine = shown.startRow + 1;
  const endLine = shown.endCol === 0 && shown.endRow > shown.startRow
    ? shown.endRow
    : shown.endRow + 1;
  return {
    kind,
    subkind: kind === "class" ? def.subkind ?? "class" : null,
    name: item.name,
    className,
    parentFunction,
    parent: container && container.out >= 0 ? container.out : -1,
    startLine,
    endLine,
    startOffset: shown.start,
    endOffset: shown.end,
    signature: signatureOf(text, def, kind, signatureStart),
  };
}

/**
 * A C function's range widened to the start of its first line when only words precede it there:
 * attribute macros the parser saw blanked (`asmlinkage __visible void f(void)`, see
 * `LanguageSpec.macros`), so the body and signature shown are the file's own.
 */
function withLeadingMacros(text: string, range: Range): Range {
  const lineStart = text.lastIndexOf("\n", range.start - 1) + 1;
  if (lineStart === range.start) return range;
  const before = text.slice(lineStart, range.start);
  const words = /^[ \t]*((?:[A-Za-z_]\w*(?:\([^()]*\))?[ \t]+)+)$/.exec(before);
  if (!words) return range;
  const start = range.start - words[1].length;
  return { ...range, start, startCol: range.startCol - words[1].length };
}

function signatureOf(text: string, def: Def, kind: SymbolKind, start = def.node.start): string {
  const { node, body } = def;
  const headerEnd = kind !== "field" && body && body.start > node.start && body.start <= node.end
    ? body.start
    : node.end;
  let header = text.slice(start, Math.min(headerEnd, start + SIGNATURE_LIMIT * 4));
  header = header.replace(/\s+/g, " ").trim().replace(/\s*(?:\{|:|=>|=|;|,)$/, "").trim();
  return header.length > SIGNATURE_LIMIT ? `${header.slice(0, SIGNATURE_LIMIT - 1)}…` : header;
}

/** The bare name of a C or C++ declarator: `*name`, `(*name(int))`, `arr[3]`, `ns::Cls::m`. */
function cName(declarator: string): string {
  const plain = declarator.replace(/^[\s*&]+/, "");
  if (/^(?:[A-Za-z_~][\w]*(?:<[^()]*>)?\s*::\s*)*(?:~?[A-Za-z_]\w*|operator\b.*)$/.test(plain)) {
    return plain.replace(/\s+/g, plain.includes("operator") ? " " : "").replace(
      /operator\s+(?=\W)/,
      "operator",
    );
  }
  const call = /((?:[A-Za-z_~][\w]*\s*::\s*)*~?[A-Za-z_]\w*)\s*\(/.exec(plain);
  if (call) return call[1].replace(/\s+/g, "");
  const word = /[A-Za-z_]\w*/.exec(plain);
  return word ? word[0] : "";
}

/** Splits `a::B<T, U>::m` at top-level `::` into `["a", "B<T, U>", "m"]`. */
function splitQualified(name: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === "<") depth++;
    else if (c === ">") depth = Math.max(0, depth - 1);
    else if (
      c === ":" && name[i + 1] === ":" && depth === 0 && !name.startsWith("operator", from)
    ) {
      parts.push(name.slice(from, i));
      from = i + 2;
      i++;
    }
  }
  parts.push(name.slice(from));
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function stripTemplateArgs(name: string): string {
  const lt = name.indexOf("<");
  return (lt > 0 ? name.slice(0, lt) : name).trim();
}

/**
 * The type a receiver, impl block or instantiation names: `*Pair[K, V]` → `Pair`,
 * `fmt::Display` → `Display`, `Wrapper<T>` → `Wrapper`, `&'a mut Foo` → `Foo`.
 */
export function baseTypeName(type: string): string {
  let t = type.trim();
  t = t.replace(/^(?:[*&(\s]|'\w+\s|mut\s|const\s|dyn\s|impl\s)+/, "");
  const cut = t.search(/[<[({\s]/);
  if (cut > 0) t = t.slice(0, cut);
  const segments = t.split(/::|\./);
  return (segments[segments.length - 1] ?? "").replace(/[^\w$#]/g, "");
}
