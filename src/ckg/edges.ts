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
  let at = 0;
  while (at < data.length) {
    const count = data[at++];
    let ref: ExtractedRef | undefined;
    let derived: string | null = null;
    for (let i = 0; i < count; i++, at += CAPTURE_STRIDE) {
      const captureName = names[data[at]] ?? "";
      if (!captureName.startsWith("ref.")) continue;
      const start = data[at + 1];
      const end = data[at + 2];
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
  return refs;
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
