/** `deft report PATH… [-o FILE.html]`: one self-contained HTML page of runs and batches. */
import { resolve } from "node:path";
import { buildReport, byteSize, ReportInputError } from "../report/report.ts";
import { UsageError, writeStderr } from "./io.ts";

/** Options of `deft report`. */
export interface ReportOptions {
  output?: string;
}

/** Where the report goes without -o. */
export const DEFAULT_REPORT_FILE = "deft-report.html";

/** Writes the report; returns the exit code. */
export async function reportCommand(paths: string[], opts: ReportOptions): Promise<number> {
  let html: string;
  const started = performance.now();
  try {
    html = await buildReport(paths);
  } catch (e) {
    if (e instanceof ReportInputError) throw new UsageError(e.message);
    throw e;
  }
  const out = resolve(opts.output ?? DEFAULT_REPORT_FILE);
  const temp = `${out}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(temp, html);
  await Deno.rename(temp, out);
  const size = new TextEncoder().encode(html).length;
  writeStderr(
    `report written to ${out} (${byteSize(size)}, ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s); open it in a browser.`,
  );
  return 0;
}

/** The command that makes the report of `path`, for the end of `deft run` and `deft batch`. */
export function reportHint(path: string): string {
  return `see it in a browser: deft report ${shellWord(path)} -o ${DEFAULT_REPORT_FILE}`;
}

function shellWord(word: string): string {
  return /^[\w./@%+=:,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
