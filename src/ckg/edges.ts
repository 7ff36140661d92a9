/**
 * The edges of one file: references (calls, attribute accesses, imports) and base types, each
 * with the innermost function, method or class around it. Read from the `@ref.*` captures of the
 * same query pass that finds definitions (see `queries/refs.ts`).
 */
import { CAPTURE_STRIDE, type CaptureResult } from "./capture.ts";
import { baseTypeName, type ExtractedSymbol } from "./extract.ts";

/** What a reference does with the name. */
export type RefKind = "call" | "attr" | "import" | "base";

/** One use of a name in a file. */
export interface ExtractedRef {
  kind: RefKind;
  name: string;
  /** For `base`: the type that derives, when no class encloses it (Rust `impl Trait for Type`). */
  derived: string | null;
  /** 1-based line and 0-based column of the name. */
  line: number;
  column: number;
  startOffset: number;
  endOffset: number;
  /** Index (in the file's symbols) of the innermost enclosing function, method or class, or -1. */
  enclosing: number;
  /**
   * The anonymous function around the reference when no named function or method encloses it
   * (`module.exports = function () { … }`, a callback at the top level): its range and lines.
   */
  anonymous: AnonymousRange | null;
}

/** Where an anonymous function sits in its file. */
export interface AnonymousRange {
  startOffset: number;
  endOffset: number;
  /** 1-based lines. */
  startLine: number;
  endLine: number;
}

const PLAIN = /^[A-Za-z_$][\w$]*$/;

const RANK: Readonly<Record<RefKind, number>> = { attr: 1, import: 2, base: 3, call: 4 };

/** The references in `text`, given its captures and the symbols extracted from them. */
export function extractRefs(
  text: string,
  capture: CaptureResult,
  symbols: readonly ExtractedSymbol[],
): ExtractedRef[] {
  const { names, data } = capture;
  const byNode = new Map<string, ExtractedRef>();
  const anonymous: AnonymousRange[] = [];
  let at = 0;
  while (at < data.length) {
    const count = data[at++];
    let ref: ExtractedRef | undefined;
    let derived: string | null = null;
    for (let i = 0; i < count; i++, at += CAPTURE_STRIDE) {
      const captureName = names[data[at]] ?? "";
      const start = data[at + 1];
      const end = data[at + 2];
      if (captureName === "anon") {
        anonymous.push({
          startOffset: start,
          endOffset: end,
          startLine: data[at + 3] + 1,
          endLine: data[at + 5] + 1,
        });
        continue;
      }
      if (!captureName.startsWith("ref.")) continue;
      const kind = captureName.slice(4);
      if (kind === "derived") {
        derived = baseTypeName(text.slice(start, end)) || null;
        continue;
      }
      const raw = text.slice(start, end);
      // Most names are one identifier; only types need their generics and qualifiers cut.
      const name = (kind === "base" || kind === "call") && !PLAIN.test(raw)
        ? baseTypeName(raw)
        : raw.trim();
      if (name === "") continue;
      ref = {
        kind: kind as RefKind,
        name,
        derived: null,
        line: data[at + 3] + 1,
        column: data[at + 4],
        startOffset: start,
        endOffset: end,
        enclosing: -1,
        anonymous: null,
      };
    }
    if (!ref) continue;
    ref.derived = ref.kind === "base" ? derived : null;
    const key = `${ref.startOffset}:${ref.endOffset}`;
    const seen = byNode.get(key);
    if (!seen || RANK[ref.kind] > RANK[seen.kind]) byNode.set(key, ref);
  }
  const refs = [...byNode.values()].sort((a, b) => a.startOffset - b.startOffset);
  assignEnclosing(refs, symbols);
  assignAnonymous(refs, symbols, anonymous);
  return refs;
}

/**
 * Gives each reference that no named function or method encloses the innermost anonymous
 * function around it (inside its enclosing class, if any), so a call made there still has a
 * caller to report. One inside a named function keeps that function as its caller.
 */
function assignAnonymous(
  refs: ExtractedRef[],
  symbols: readonly ExtractedSymbol[],
  anonymous: AnonymousRange[],
): void {
  if (anonymous.length === 0) return;
  for (const ref of refs) {
    const outer = ref.enclosing >= 0 ? symbols[ref.enclosing] : undefined;
    if (outer && outer.kind !== "class") continue;
    let best: AnonymousRange | null = null;
    for (const range of anonymous) {
      if (range.startOffset > ref.startOffset || range.endOffset < ref.endOffset) continue;
      if (outer && range.startOffset < outer.startOffset) continue;
      if (!best || range.startOffset >= best.startOffset) best = range;
    }
    ref.anonymous = best;
  }
}

/** Sets each reference's innermost enclosing function, method or class (one sweep). */
function assignEnclosing(refs: ExtractedRef[], symbols: readonly ExtractedSymbol[]): void {
  const containers = symbols
    .map((symbol, index) => ({ symbol, index }))
    .filter(({ symbol }) =>
      symbol.kind === "function" || symbol.kind === "method" || symbol.kind === "class"
    )
    .sort((a, b) =>
      a.symbol.startOffset - b.symbol.startOffset || b.symbol.endOffset - a.symbol.endOffset
    );
  const stack: { symbol: ExtractedSymbol; index: number }[] = [];
  let next = 0;
  for (const ref of refs) {
    while (next < containers.length && containers[next].symbol.startOffset <= ref.startOffset) {
      const item = containers[next++];
      while (
        stack.length > 0 && stack[stack.length - 1].symbol.endOffset <= item.symbol.startOffset
      ) {
        stack.pop();
      }
      stack.push(item);
    }
    while (stack.length > 0 && stack[stack.length - 1].symbol.endOffset <= ref.startOffset) {
      stack.pop();
    }
    ref.enclosing = stack.length > 0 ? stack[stack.length - 1].index : -1;
  }
}
