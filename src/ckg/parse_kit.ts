/**
 * What the indexer needs only when a file has to be parsed: tree-sitter's runtime and workers, and
 * the extraction of symbols and references. Loaded on first need, so a search on an unchanged
 * index (the common one-shot case) never loads it.
 */
export { extractSymbols } from "./extract.ts";
export { extractRefs } from "./edges.ts";
export { InProcessParsing, WorkerPool } from "./worker_pool.ts";
export { recoverDefinitions } from "./preproc.ts";
export { captureInProcess } from "./runtime.ts";
