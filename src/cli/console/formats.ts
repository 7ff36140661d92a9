/**
 * The console's output formats (`--output-format`): declared here, beside the consoles that write
 * them, so the command line's table (cli/spec.ts) reads them from the console and never the other
 * way round.
 */

/** `--output-format` values. */
export type OutputFormat = "text" | "json" | "stream-json";

/** The `--output-format` choices, for the command line. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = ["text", "json", "stream-json"];
