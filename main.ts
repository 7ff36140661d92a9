/**
 * Deft's entry point. Pipeline commands with a plain command line (`deft tool`, `deft tools`,
 * `deft serve`) take a fast path that never loads commander; everything else, including help and
 * usage errors, goes through the full commander program in src/cli/program.ts.
 */
import { runPipelineCommand } from "./src/cli/dispatch.ts";
import { fastParse } from "./src/cli/fast.ts";
import { UsageError, writeStderr } from "./src/cli/io.ts";

async function main(args: string[]): Promise<number> {
  try {
    const fast = fastParse(args);
    if (fast) return await runPipelineCommand(fast);
    const { runProgram } = await import("./src/cli/program.ts");
    return await runProgram(args);
  } catch (e) {
    if (e instanceof UsageError) {
      writeStderr(`deft: ${e.message}`);
      return 2;
    }
    if (e instanceof Deno.errors.BrokenPipe) return 0;
    writeStderr(`deft: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
