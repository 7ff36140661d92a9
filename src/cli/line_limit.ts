/** `--max-line-bytes` of `deft serve` and `deft mcp`, checked as a usage error. */
import { parseMaxLineBytes } from "../line_reader.ts";
import { UsageError } from "./io.ts";

/** The line limit in bytes (default 256 MiB); a bad value is a `UsageError`. */
export function maxLineBytesOption(text: string | undefined): number {
  try {
    return parseMaxLineBytes(text);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
