/**
 * Standard streams for pipeline commands: whole writes to stdout, reading stdin whole or by line.
 * Re-exports the usage error (exit code 2) that commands throw.
 */

import { readLines } from "../line_reader.ts";
import { maskOutput } from "../policy/secrets.ts";
import { terminalText } from "../policy/terminal_text.ts";

export { UsageError } from "../errors.ts";

const encoder = new TextEncoder();

/** Writes all of `text` to stdout (a single `write` may be partial for large outputs). */
export async function writeStdout(text: string): Promise<void> {
  const bytes = encoder.encode(text);
  let written = 0;
  while (written < bytes.length) {
    written += await Deno.stdout.write(bytes.subarray(written));
  }
}

/** Writes a line to stderr, for progress and diagnostics. */
export function writeStderr(text: string): void {
  const bytes = encoder.encode(text.endsWith("\n") ? text : `${text}\n`);
  let written = 0;
  while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
}

/**
 * Writes a line of text that may come from a repository, a config file or a server (a warning, an
 * error) to stderr: secrets masked and control characters made inert on the user's terminal.
 */
export function warnStderr(text: string): void {
  writeStderr(terminalText(maskOutput(text)));
}

/** Reads stdin to its end as UTF-8 text. */
export async function readStdin(): Promise<string> {
  return await new Response(Deno.stdin.readable).text();
}

/** Yields stdin line by line (without the line ending) until end of input. */
export async function* stdinLines(): AsyncGenerator<string> {
  for await (const event of readLines(Deno.stdin.readable, Number.MAX_SAFE_INTEGER)) {
    if ("line" in event) yield event.line;
  }
}
