/**
 * Recovery for C and C++ files whose preprocessor conditionals split a block: with both branches
 * of `#ifdef X … } else { #else … { #endif` in the text, braces do not balance and tree-sitter's
 * error recovery can swallow the functions that follow. Keeping only one branch of each
 * conditional, as a compiler would, gives text whose braces balance again.
 */

import { CAPTURE_STRIDE, type CaptureOutcome, type CaptureResult } from "./capture.ts";
import { type ExtractedSymbol, extractSymbols } from "./extract.ts";
import { type ExtractedRef, extractRefs } from "./edges.ts";
import type { GrammarId } from "./languages.ts";

/**
 * A conditional directive right before a line that opens a block: a function whose header has
 * one variant per branch (`#ifdef X` header `#else` header `#endif` `{`) or whose body only one
 * branch has. The parser reads such a header as a declaration and the body as a stray block, an
 * error that stays inside what it reads as one definition, so only the branch parse finds it.
 */
const HEADER_SPLIT = /^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|else|endif)\b.*\n[ \t]*\{/m;

/** What a file holds, once recovered as far as it goes. */
export interface Recovered {
  hasError: boolean;
  symbols: ExtractedSymbol[];
  refs: ExtractedRef[];
}

/**
 * The symbols and references of a C or C++ file whose first parse (`first`) has syntax errors.
 * When no error region and no function or class of that parse runs across a top-level cut, the
 * errors stay inside the definitions they are in (a loop macro before a block, a cast macro in
 * an expression) and the first parse is kept as it is: parsing again could not find more.
 * Otherwise the file is parsed again keeping one branch of each preprocessor conditional, then,
 * if errors remain, one top-level definition at a time; the parse that yields the most
 * definitions is kept. `parse` parses a batch of texts.
 */
export async function recoverDefinitions(
  lang: GrammarId,
  text: string,
  first: CaptureResult,
  parse: (texts: string[]) => Promise<CaptureOutcome[]>,
): Promise<Recovered> {
  const whole = extractSymbols(lang, text, first);
  if (!HEADER_SPLIT.test(text) && !needsDefinitionRecovery(first, whole, definitionCuts(text))) {
    return { hasError: first.hasError, symbols: whole, refs: extractRefs(text, first, whole) };
  }
  let best = { text, result: first, symbols: whole };
  const branch = oneBranchOnly(text);
  if (branch !== undefined) {
    const [again] = await parse([branch]).catch(() => [undefined]);
    if (again?.ok) {
      const after = extractSymbols(lang, branch, again.result);
      if (!again.result.hasError || after.length > whole.length) {
        best = { text: branch, result: again.result, symbols: after };
      }
    }
  }
  if (best.result.hasError) {
    const cuts = definitionCuts(best.text);
    const pieces = needsDefinitionRecovery(best.result, best.symbols, cuts)
      ? await captureByDefinition(best.text, cuts, parse).catch(() => undefined)
      : undefined;
    if (pieces?.ok) {
      const after = extractSymbols(lang, best.text, pieces.result);
      if (after.length >= best.symbols.length) {
        best = { text: best.text, result: pieces.result, symbols: after };
      }
    }
  }
  const hasError = best.result.hasError;
  if (best.text === text) {
    return { hasError, symbols: best.symbols, refs: extractRefs(text, best.result, best.symbols) };
  }
  // Definitions only the other branches hold (`#else` variants with other names) stay too.
  const names = new Set(best.symbols.map((symbol) => symbol.name));
  const parents = new Set(whole.map((symbol) => symbol.parent));
  const extra = whole.filter((symbol, index) =>
    symbol.parent < 0 && !parents.has(index) && !names.has(symbol.name)
  );
  return {
    hasError,
    symbols: [...best.symbols, ...extra],
    refs: extractRefs(best.text, best.result, best.symbols),
  };
}

const DIRECTIVE = /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)$/;

/**
 * `text` with every conditional directive blanked and, of each conditional, only the branch a
 * compiler would most likely see kept (the first, or the `#else` of an `#if 0`); the other branches
 * are blanked too. Blanking keeps line breaks and replaces every other character with a space, so
 * offsets and line numbers stay those of `text`. Undefined when there is no conditional.
 */
export function oneBranchOnly(text: string): string | undefined {
  if (!/^[ \t]*#[ \t]*if/m.test(text)) return undefined;
  const lines = text.split("\n");
  // Per open conditional: whether the branch being read is kept, and whether one was kept.
  const stack: { keeping: boolean; kept: boolean; outerKeeping: boolean }[] = [];
  let keeping = true;
  let continued = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (continued) {
      continued = line.endsWith("\\");
      lines[i] = blank(line);
      continue;
    }
    const m = DIRECTIVE.exec(line);
    if (!m) {
      if (!keeping) lines[i] = blank(line);
      continue;
    }
    const [, directive, rest] = m;
    continued = line.endsWith("\\");
    lines[i] = blank(line);
    if (directive.startsWith("if")) {
      const dead = directive === "if" && /^\s*0\s*(?:\/[/*].*)?$/.test(rest);
      stack.push({ keeping: keeping && !dead, kept: !dead, outerKeeping: keeping });
      keeping = keeping && !dead;
    } else if (directive === "endif") {
      const frame = stack.pop();
      keeping = frame ? frame.outerKeeping : true;
    } else {
      const frame = stack[stack.length - 1];
      if (!frame) continue;
      frame.keeping = frame.outerKeeping && !frame.kept;
      frame.kept = true;
      keeping = frame.keeping;
    }
  }
  return lines.join("\n");
}

function blank(line: string): string {
  return line.replace(/[^\r]/g, " ");
}

/**
 * Where `text` can be cut into top-level definitions, for parsing each on its own when one bad
 * region (an initializer holding `#define` rows, a macro tree-sitter misreads, an unbalanced
 * brace) would otherwise swallow or misplace the definitions after it: the offsets of lines that
 * start at column 0 with a name (not a label) right after a line that ends a declaration or
 * definition (`}`, `;`), a preprocessor directive or a comment. Code inside a function is
 * indented in practice, as ctags also assumes. The first cut is 0.
 */
export function definitionCuts(text: string): number[] {
  const cuts = [0];
  let ended = true;
  let inComment = false;
  let continued = false;
  let offset = 0;
  for (const line of text.split("\n")) {
    const start = offset;
    offset += line.length + 1;
    const trimmed = line.trim();
    if (continued) {
      continued = trimmed.endsWith("\\");
      ended = true;
      continue;
    }
    if (inComment) {
      if (trimmed.includes("*/")) {
        inComment = false;
        ended = ended || /\*\/\s*$/.test(trimmed);
      }
      continue;
    }
    if (trimmed === "") continue;
    if (trimmed.startsWith("#")) {
      continued = trimmed.endsWith("\\");
      ended = true;
      continue;
    }
    if (trimmed.startsWith("//")) continue;
    if (trimmed.startsWith("/*")) {
      if (!trimmed.includes("*/")) inComment = true;
      continue;
    }
    if (ended && start > 0 && /^[A-Za-z_]/.test(line) && !/^[A-Za-z_]\w*\s*:(?!:)/.test(line)) {
      cuts.push(start);
    }
    const code = trimmed.replace(/\/\/.*$/, "").replace(/\/\*.*?\*\//g, "").trimEnd();
    if (/\/\*/.test(code) && !/\*\//.test(code.slice(code.lastIndexOf("/*")))) inComment = true;
    ended = /[;}]$/.test(code);
  }
  return cuts;
}

/**
 * Whether parsing one definition at a time could recover what the whole-file parse lost: an
 * error region (`@error` captures) or a function or class runs across a cut, so it may have
 * swallowed the definitions after it. Errors that stay inside one definition (a macro tree-sitter
 * misreads in a prototype, common in system headers) cost nothing to leave as they are.
 */
export function needsDefinitionRecovery(
  capture: CaptureResult,
  symbols: readonly ExtractedSymbol[],
  cuts: readonly number[],
): boolean {
  if (cuts.length < 2) return false;
  const spans: { start: number; end: number }[] = [];
  const { names, data } = capture;
  for (let at = 0; at < data.length;) {
    const count = data[at++];
    for (let i = 0; i < count; i++, at += CAPTURE_STRIDE) {
      if (names[data[at]] === "error") spans.push({ start: data[at + 1], end: data[at + 2] });
    }
  }
  for (const symbol of symbols) {
    if (symbol.kind === "function" || symbol.kind === "class") {
      spans.push({ start: symbol.startOffset, end: symbol.endOffset });
    }
  }
  spans.sort((a, b) => a.start - b.start);
  // Both lists are sorted: one sweep.
  let next = 1;
  for (const span of spans) {
    while (next < cuts.length && cuts[next] <= span.start) next++;
    if (next < cuts.length && cuts[next] < span.end) return true;
  }
  return false;
}

/** Definitions parsed together before a group with an error is parsed one definition at a time. */
const GROUP_CHARS = 4096;

/**
 * Parses `text` one top-level definition at a time (cut at `cuts`) and joins the captures as if
 * from one parse of the whole text: offsets and rows are moved back to where each piece sits
 * (each piece starts a line, so columns stay). A syntax error then costs only the definition it
 * is in. Small definitions are parsed in groups of about `GROUP_CHARS`, and only a group with an
 * error again one by one: a header of a thousand one-line prototypes is not a thousand parses.
 * `parse` parses a batch of texts (on the parser workers, when there are some).
 */
export async function captureByDefinition(
  text: string,
  cuts: readonly number[],
  parse: (texts: string[]) => Promise<CaptureOutcome[]>,
): Promise<CaptureOutcome> {
  // The row each cut starts on.
  const rows: number[] = [];
  let row = 0;
  let scanned = 0;
  for (const cut of cuts) {
    for (let k = text.indexOf("\n", scanned); k >= 0 && k < cut; k = text.indexOf("\n", k + 1)) {
      row++;
    }
    scanned = cut;
    rows.push(row);
  }
  const end = (index: number) => index < cuts.length ? cuts[index] : text.length;
  const groups: { from: number; to: number }[] = [];
  for (let from = 0; from < cuts.length;) {
    let to = from + 1;
    while (to < cuts.length && end(to + 1) - cuts[from] <= GROUP_CHARS) to++;
    groups.push({ from, to });
    from = to;
  }
  const pieces = async (spans: { from: number; to: number }[]) =>
    (await parse(spans.map(({ from, to }) => text.slice(cuts[from], end(to))))).map(
      (outcome, i) => ({ ...spans[i], outcome }),
    );
  const parsed = await pieces(groups);
  const dirty = parsed.filter(({ from, to, outcome }) =>
    outcome.ok && outcome.result.hasError && to - from > 1
  );
  const singles: { from: number; to: number }[] = [];
  for (const { from, to } of dirty) {
    for (let one = from; one < to; one++) singles.push({ from: one, to: one + 1 });
  }
  const again = await pieces(singles);
  const chosen = [...parsed.filter((p) => !dirty.includes(p)), ...again].sort((a, b) =>
    a.from - b.from
  );
  const parts: Int32Array[] = [];
  let names: string[] = [];
  let hasError = false;
  for (const { from, outcome } of chosen) {
    if (!outcome.ok) return outcome;
    const { data } = outcome.result;
    for (let at = 0; at < data.length;) {
      const count = data[at++];
      for (let c = 0; c < count; c++, at += CAPTURE_STRIDE) {
        data[at + 1] += cuts[from];
        data[at + 2] += cuts[from];
        data[at + 3] += rows[from];
        data[at + 5] += rows[from];
      }
    }
    parts.push(data);
    names = outcome.result.names;
    hasError ||= outcome.result.hasError;
  }
  const data = new Int32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return { ok: true, result: { names, data, hasError } };
}
