/**
 * How long one tool call may run before the tool host gives up on it. A call past its deadline is
 * answered with an error and the worker that ran it is replaced, so a stuck call (a blocking
 * open, an evaluation that never returns) cannot stall the calls after it.
 */
import { normalizeToolName } from "../base.ts";
import { catalogEntry } from "../catalog.ts";

/** Seconds a call may take when nothing else is configured. */
export const DEFAULT_DEADLINE_SECONDS = 300;

/** Bash kills its own command at its `timeout`; its deadline is that plus this margin. */
const BASH_MARGIN_SECONDS = 60;

/** Seconds granted to close the tools at the end of a session. */
export const CLOSE_DEADLINE_SECONDS = 30;

/**
 * Per-tool deadlines in seconds; the key `default` applies to tools without one. Names are
 * matched ignoring case and underscores.
 */
export type Deadlines = Readonly<Record<string, number>>;

/**
 * The deadline in seconds of one call to `tool`: the configured one for the tool, else the
 * configured `default`, else the tool's own in the catalog (the file editors' is short), else
 * `DEFAULT_DEADLINE_SECONDS`. A tool that keeps its own time (its catalog entry's `ownTimeout`:
 * bash's `timeout` argument, else `bashTimeout`, else 120 s) gets never less than that plus a
 * margin.
 */
export function deadlineSeconds(
  deadlines: Deadlines | undefined,
  tool: string,
  args: Record<string, unknown>,
  bashTimeout?: number,
): number {
  const wanted = normalizeToolName(tool);
  let seconds: number | undefined;
  for (const [name, value] of Object.entries(deadlines ?? {})) {
    if (normalizeToolName(name) === wanted) seconds = value;
  }
  const entry = catalogEntry(tool);
  seconds ??= deadlines?.default ?? entry?.deadline ?? DEFAULT_DEADLINE_SECONDS;
  if (entry?.ownTimeout) {
    const timeout = entry.ownTimeout(args) ?? bashTimeout ?? 120;
    seconds = Math.max(seconds, timeout + BASH_MARGIN_SECONDS);
  }
  return seconds;
}

/**
 * Parses `--deadline`: `SECONDS` (every tool) or `TOOL=SECONDS` pairs separated by commas, e.g.
 * `view=5,json_edit_tool=10,default=60`. Throws an Error naming the bad part.
 */
export function parseDeadlines(text: string): Record<string, number> {
  const result: Record<string, number> = {};
  for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const eq = part.indexOf("=");
    const name = eq < 0 ? "default" : part.slice(0, eq).trim();
    const raw = eq < 0 ? part : part.slice(eq + 1).trim();
    const seconds = Number(raw);
    if (name === "" || raw === "" || !Number.isFinite(seconds) || seconds <= 0) {
      throw new Error(
        `--deadline: '${part}' is not TOOL=SECONDS or SECONDS with a positive number of ` +
          `seconds (e.g. --deadline view=5,default=60)`,
      );
    }
    result[name] = seconds;
  }
  return result;
}
