/**
 * In-process tree-sitter: initialises the runtime once per process and keeps each grammar (and
 * its compiled query) for the life of the process. The library itself is imported on first use,
 * so a search that finds nothing to re-parse never loads it.
 */
import type * as TreeSitter from "web-tree-sitter";
import {
  CAPTURE_STRIDE,
  captureDefinitions,
  type CaptureOutcome,
  type LoadedGrammar,
} from "./capture.ts";
import { grammarModule, libraryUrl, runtimeModule, runtimeOptions } from "./grammars.ts";
import { type GrammarId, LANGUAGES } from "./languages.ts";

let library: Promise<typeof TreeSitter> | undefined;
const grammars = new Map<GrammarId, Promise<LoadedGrammar>>();

function treeSitter(): Promise<typeof TreeSitter> {
  library ??= (async () => {
    const [lib, runtime] = await Promise.all([
      libraryUrl().then((url) => import(url) as Promise<typeof TreeSitter>),
      runtimeModule(),
    ]);
    await lib.Parser.init(runtimeOptions(runtime));
    return lib;
  })();
  library.catch(() => library = undefined);
  return library;
}

/** Loads (once) the grammar `id` and compiles its definitions query. */
export function loadGrammar(id: GrammarId): Promise<LoadedGrammar> {
  let loaded = grammars.get(id);
  if (!loaded) {
    loaded = (async () => {
      const { Language, Query } = await treeSitter();
      const language = Language.loadSync(await grammarModule(id));
      return { language, query: new Query(language, LANGUAGES[id].query) };
    })();
    // A failed load must not poison later attempts.
    loaded.catch(() => grammars.delete(id));
    grammars.set(id, loaded);
  }
  return loaded;
}

/** Parses `text` as `id` in this thread and returns its definition captures. */
export async function captureInProcess(
  id: GrammarId,
  text: string,
  timeoutMs: number,
): Promise<CaptureOutcome> {
  const grammar = await loadGrammar(id);
  const { Parser, Query } = await treeSitter();
  return captureDefinitions({ Parser, Query }, grammar, text, timeoutMs);
}

/**
 * Parses `text` one top-level definition at a time (cut at `cuts`, see `preproc.ts`) and joins
 * the captures as if from one parse of the whole text: offsets and rows are moved back to where
 * each piece sits (each piece starts a line, so columns stay). A syntax error then costs only the
 * definition it is in.
 */
export async function captureByDefinition(
  id: GrammarId,
  text: string,
  cuts: readonly number[],
  timeoutMs: number,
): Promise<CaptureOutcome> {
  const parts: Int32Array[] = [];
  let names: string[] = [];
  let hasError = false;
  let row = 0;
  const deadline = performance.now() + timeoutMs;
  for (let i = 0; i < cuts.length; i++) {
    const start = cuts[i];
    const end = i + 1 < cuts.length ? cuts[i + 1] : text.length;
    const piece = text.slice(start, end);
    const outcome = await captureInProcess(id, piece, Math.max(1, deadline - performance.now()));
    if (!outcome.ok) return outcome;
    const { data } = outcome.result;
    names = outcome.result.names;
    hasError ||= outcome.result.hasError;
    let at = 0;
    while (at < data.length) {
      const count = data[at++];
      for (let c = 0; c < count; c++, at += CAPTURE_STRIDE) {
        data[at + 1] += start;
        data[at + 2] += start;
        data[at + 3] += row;
        data[at + 5] += row;
      }
    }
    parts.push(data);
    for (let k = piece.indexOf("\n"); k >= 0; k = piece.indexOf("\n", k + 1)) row++;
  }
  const data = new Int32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return { ok: true, result: { names, data, hasError } };
}
