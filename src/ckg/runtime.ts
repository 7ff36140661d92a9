/**
 * In-process tree-sitter: initialises the runtime once per process and keeps each grammar (and
 * its compiled query) for the life of the process. The library itself is imported on first use,
 * so a search that finds nothing to re-parse never loads it.
 */
import type * as TreeSitter from "web-tree-sitter";
import {
  captureDefinitions,
  type CaptureOutcome,
  type CaptureTiming,
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
      const { query, macros } = LANGUAGES[id];
      return {
        language,
        query: new Query(language, query),
        macros: macros === undefined ? undefined : new RegExp(macros, "g"),
      };
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
  timing?: CaptureTiming,
): Promise<CaptureOutcome> {
  const grammar = await loadGrammar(id);
  const { Parser, Query } = await treeSitter();
  return captureDefinitions({ Parser, Query }, grammar, text, timeoutMs, timing);
}
