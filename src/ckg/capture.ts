/**
 * Parsing one file and running its definitions query: the only code that touches tree-sitter
 * trees. It runs in-process (see `runtime.ts`) and inside parser workers (see `worker_pool.ts`),
 * which receive it as source text: `captureDefinitions` must stay self-contained (no imports at
 * run time, no module-level values, no helpers defined outside its body).
 */
import type { Language, Parser, Query } from "web-tree-sitter";

/** Numbers per capture in `CaptureResult.data`. */
export const CAPTURE_STRIDE = 7;

/** The tree-sitter classes a capture needs, so a worker can pass its own copy of the library. */
export interface TreeSitterApi {
  Parser: typeof Parser;
  Query: typeof Query;
}

/** A loaded grammar with its compiled query; the parser is created on first use. */
export interface LoadedGrammar {
  language: Language;
  query: Query;
  /** Macros the parser sees blanked (flag `g`; see `LanguageSpec.macros`). */
  macros?: RegExp;
  parser?: Parser;
}

/**
 * The query matches of one file, flattened so they cross a worker boundary cheaply.
 *
 * `data` holds, per match: the capture count, then per capture `CAPTURE_STRIDE` numbers:
 * capture name index (into `names`), start offset, end offset (UTF-16 code units of the text),
 * start row, start column, end row, end column (rows 0-based; for `ref.*` and `error` captures
 * the end row and column are the start's).
 */
export interface CaptureResult {
  names: string[];
  data: Int32Array;
  /** The tree holds ERROR or MISSING nodes: the file has syntax errors. */
  hasError: boolean;
}

/** Milliseconds spent, added up over calls (the bench's breakdown). */
export interface CaptureTiming {
  /** Blanking macros and parsing. */
  parseMs: number;
  /** Running the query and flattening its matches. */
  queryMs: number;
}

/** Either the captures or why there are none. */
export type CaptureOutcome =
  | { ok: true; result: CaptureResult }
  | { ok: false; error: string };

/**
 * Parses `text` with `grammar` and returns its definition captures. Gives up (returning an error)
 * when parsing or querying takes longer than `timeoutMs`.
 */
export function captureDefinitions(
  api: TreeSitterApi,
  grammar: LoadedGrammar,
  text: string,
  timeoutMs: number,
  timing?: CaptureTiming,
): CaptureOutcome {
  const started = performance.now();
  const deadline = started + timeoutMs;
  let timedOut = false;
  const expired = () => {
    if (performance.now() > deadline) timedOut = true;
    return timedOut;
  };
  if (!grammar.parser) {
    grammar.parser = new api.Parser();
    grammar.parser.setLanguage(grammar.language);
  }
  const parser = grammar.parser;
  // Blanked to spaces of the same length: every offset, row and column stays the text's. Not on
  // a directive's line: `#define __aligned_x ____cacheline_aligned` left with no value would
  // take the next line as its value.
  const parsed = grammar.macros
    ? text.replace(grammar.macros, (macro: string, offset: number) => {
      let at = text.lastIndexOf("\n", offset) + 1;
      while (text[at] === " " || text[at] === "\t") at++;
      return text[at] === "#" ? macro : " ".repeat(macro.length);
    })
    : text;
  let tree;
  try {
    tree = parser.parse(parsed, null, { progressCallback: expired });
  } catch (e) {
    // A parser that threw mid-parse keeps partial state; the next file needs a fresh one.
    grammar.parser = undefined;
    try {
      parser.delete();
    } catch {
      // already unusable
    }
    return { ok: false, error: `the parser failed: ${e instanceof Error ? e.message : e}` };
  }
  if (!tree) {
    parser.reset();
    return {
      ok: false,
      error: timedOut
        ? `parsing took longer than ${Math.round(timeoutMs / 1000)} s`
        : "the parser returned no tree",
    };
  }
  const parsedAt = performance.now();
  if (timing) timing.parseMs += parsedAt - started;
  try {
    const root = tree.rootNode;
    const matches = grammar.query.matches(root, { progressCallback: expired });
    if (timedOut) {
      return {
        ok: false,
        error: `finding definitions took longer than ${Math.round(timeoutMs / 1000)} s`,
      };
    }
    let size = 0;
    for (const match of matches) size += 1 + match.captures.length * 7;
    const data = new Int32Array(size);
    const indexOf = new Map<string, number>();
    const names = grammar.query.captureNames;
    names.forEach((name, i) => indexOf.set(name, i));
    // A reference or an error region is read by its start and its offsets alone: its end row and
    // column (one more call into the parser per capture) are given as its start's.
    const startOnly = names.map((name) => name.startsWith("ref.") || name === "error");
    let at = 0;
    for (const match of matches) {
      data[at++] = match.captures.length;
      for (const capture of match.captures) {
        const node = capture.node;
        const start = node.startPosition;
        const index = indexOf.get(capture.name) ?? -1;
        const end = startOnly[index] ? start : node.endPosition;
        data[at++] = index;
        data[at++] = node.startIndex;
        data[at++] = node.endIndex;
        data[at++] = start.row;
        data[at++] = start.column;
        data[at++] = end.row;
        data[at++] = end.column;
      }
    }
    return { ok: true, result: { names: [...names], data, hasError: root.hasError } };
  } catch (e) {
    return { ok: false, error: `the query failed: ${e instanceof Error ? e.message : e}` };
  } finally {
    tree.delete();
    if (timing) timing.queryMs += performance.now() - parsedAt;
  }
}
