/** Picks the console for `run` and `interactive` from the output format, `--color` and the tty. */
import { type AgentConsole, StderrConsole } from "../../agent/console.ts";
import { LiveConsole } from "./live.ts";
import { StreamJsonConsole } from "./stream_json.ts";
import { type ColorMode, useColor } from "./style.ts";

import type { OutputFormat } from "./formats.ts";
export { OUTPUT_FORMATS, type OutputFormat } from "./formats.ts";

/**
 * The console: NDJSON events for `stream-json`; on a terminal (or with `--color always`) the live
 * console; otherwise the plain one-line-per-step console, unchanged for scripts and logs.
 */
export function chooseConsole(options: {
  outputFormat?: OutputFormat;
  color?: ColorMode;
  workspace: string;
}): AgentConsole {
  if (options.outputFormat === "stream-json") return new StreamJsonConsole();
  const terminal = Deno.stderr.isTerminal();
  const color = useColor(options.color, terminal);
  if (terminal || color) {
    return new LiveConsole({ color, live: terminal, workspace: options.workspace });
  }
  return new StderrConsole();
}
