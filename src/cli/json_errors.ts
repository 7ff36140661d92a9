/**
 * Usage errors for scripts: when a headless run (`deft run`, its alias `deft exec`, or the launch
 * line's `deft -p`) was asked for JSON on stdout (`--json`, `--output-format json|stream-json`), a
 * mistake on the command line is reported there too, so a pipeline reading stdout sees an error
 * object instead of nothing.
 */
import { writeStdout } from "./io.ts";
import { maskOutput } from "../policy/secrets.ts";

/** True when `args` is a headless run: `run`, `exec`, or a launch line (options first) with -p. */
function headless(args: readonly string[]): boolean {
  if (args[0] === "run" || args[0] === "exec") return true;
  return args[0]?.startsWith("-") === true && args.some((a) => a === "-p" || a === "--print");
}

/** The JSON format a headless run's `args` asked for, if any. */
export function requestedJsonFormat(args: readonly string[]): "json" | "stream-json" | undefined {
  if (!headless(args)) return undefined;
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
