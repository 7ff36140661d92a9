/**
 * What the prompt of `deft interactive` writes before and after its session is assembled: the
 * text it shows (masked and inert), the line above the first prompt, the note for Ctrl-C at an
 * idle prompt, and the start trace. Light on purpose: src/cli/interactive.ts draws the prompt
 * with it before the agent, the tools and the model client are loaded (./chat.ts).
 */
import { writeStderr } from "../io.ts";
import { maskOutput } from "../../policy/secrets.ts";
import { terminalText } from "../../policy/terminal_text.ts";
import { screen } from "../console/screen.ts";
import { readEnv } from "../../env.ts";
import type { LineReader } from "./line_reader.ts";

/**
 * What interactive prints itself (the model id, /diff, the answer) is model or repository text:
 * masked like the trajectory, and inert on the terminal.
 */
export const shown = (text: string): string => terminalText(maskOutput(text));

/** Written around the composer line a running turn shows under its output (console/screen.ts). */
export const say = (text: string): void => screen.write(`${shown(text).replace(/\n?$/, "\n")}`);

/**
 * `DEFT_START_TRACE=1`: one line on stderr as the first prompt is drawn, with the milliseconds
 * since the process began at which the start's phases ended (bench/startup_bench.ts reads it).
 */
export const startTrace: string[] = readEnv("DEFT_START_TRACE")
  ? [`loaded ${performance.now().toFixed(0)}`]
  : [];

/** Writes the start trace, once, as the first prompt is drawn. */
export function traceStart(): void {
  if (startTrace.length === 0) return;
  writeStderr(`start: ${startTrace.join(", ")}, prompt ${performance.now().toFixed(0)} ms`);
  startTrace.length = 0;
}

/** The line above the first prompt: the model, the workspace, the approval mode. */
export function banner(
  at: { provider: string; model: string; workspace: string; approval: string },
  resumed?: { id: string | null; path: string },
): string {
  return `deft interactive: ${at.provider}/${at.model} in ${at.workspace}, approval: ` +
    `${at.approval}. Type /help for commands.` +
    (resumed ? `\nresumed session ${resumed.id} (${resumed.path})` : "");
}

/** Ctrl-C with no turn running: the session stays; how to leave is said. */
export function idleInterrupt(reader: LineReader, terminal: boolean): void {
  if (terminal) {
    writeStderr("\n(Ctrl-D on an empty line or /exit leaves)");
    reader.clearLine();
  } else writeStderr("\n(type /exit to leave)");
}
