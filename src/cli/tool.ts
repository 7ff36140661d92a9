/** `deft tool NAME [ARGS]`: one tool call, one JSON result on stdout. */
import { ToolExecutor } from "../tools/executor.ts";
import { registeredToolNames, resolveToolName } from "../tools/catalog.ts";
import { createHostedTools } from "../tools/host/mod.ts";
import { isPlainObject } from "../tools/validate.ts";
import { hostDirs, type ToolCommandOptions, toolContext } from "./context.ts";
import { readStdin, UsageError, writeStdout } from "./io.ts";

/** Runs one call; returns 0 when the tool succeeded, 1 when it failed. */
export async function toolCommand(
  name: string,
  argsText: string | undefined,
  opts: ToolCommandOptions,
): Promise<number> {
  const args = parseArgs(argsText ?? await argsFromStdin());
  // A missing bwrap is reported now only if the tool called would need it.
  const context = await toolContext(opts, [name]);
  context.settings.singleCall = true;
  // Only the tool called is built (and started, and closed); an unknown name gets every tool, so
  // the error lists them all.
  const found = resolveToolName(name);
  const names = found ? [found] : registeredToolNames();
  const tools = await createHostedTools(context, names, hostDirs(context.settings));
  const executor = new ToolExecutor(tools);
  try {
    const result = await executor.executeToolCall({ name, call_id: "cli", arguments: args });
    await writeStdout(
      JSON.stringify({
        name: result.name,
        success: result.success,
        output: result.output,
        error: result.error,
        error_code: result.error_code,
      }) + "\n",
    );
    return result.success ? 0 : 1;
  } finally {
    await executor.closeTools();
  }
}

async function argsFromStdin(): Promise<string> {
  if (Deno.stdin.isTerminal()) return "{}";
  const text = await readStdin();
  if (text.trim() === "") {
    throw new UsageError(
      "no arguments: ARGS was not given and stdin was empty. " +
        "Pass a JSON object as ARGS or on stdin ('{}' for none).",
    );
  }
  return text;
}

function parseArgs(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `ARGS is not valid JSON (${(e as Error).message}). ` +
        `Pass a JSON object, e.g. '{"command": "ls"}'.`,
    );
  }
  if (!isPlainObject(value)) {
    const got = Array.isArray(value) ? "an array" : value === null ? "null" : typeof value;
    throw new UsageError(`ARGS must be a JSON object, got ${got}. Wrap arguments in {...}.`);
  }
  return value;
}
