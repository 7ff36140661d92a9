/**
 * Usage errors for scripts: when `deft run` was asked for JSON on stdout (`--json`,
 * `--output-format json|stream-json`), a mistake on the command line is reported there too, so
 * a pipeline reading stdout sees an error object instead of nothing.
 */
import { writeStdout } from "./io.ts";
import { maskOutput } from "../policy/secrets.ts";

/** The JSON format `args` asked `deft run` for, if any. */
export function requestedJsonFormat(args: readonly string[]): "json" | "stream-json" | undefined {
  if (args[0] !== "run") return undefined;
  let format: string | undefined;
  args.forEach((arg, i) => {
    if (arg === "--json") format ??= "json";
    else if (arg === "--output-format") format = args[i + 1];
    else if (arg.startsWith("--output-format=")) format = arg.slice("--output-format=".length);
  });
  return format === "json" || format === "stream-json" ? format : undefined;
}

/** Writes the usage error `message` as JSON on stdout when `args` asked for JSON. */
export async function reportUsageErrorAsJson(
  args: readonly string[],
  message: string,
): Promise<void> {
  const format = requestedJsonFormat(args);
  if (!format) return;
  // The message may quote the command line, which can hold a key.
  const error = { success: false, exit_code: 2, error: maskOutput(message) };
  await writeStdout(
    JSON.stringify(format === "stream-json" ? { type: "error", ...error } : error) + "\n",
  );
}
