/**
 * What the sandbox costs a one-shot editor call, against the floor this design has (issue 51):
 * `deft tool str_replace_based_edit_tool view` with the default sandbox (Deft started again inside
 * bubblewrap as the tool host) against the same call with `--sandbox none` plus bubblewrap running
 * `true` with the host's own argv plus a Deno hello-world with the host's flags, all interleaved
 * in one run (floors.ts). A session pays the sandboxed host's start once, at its first file-tool
 * call.
 */
import { openBench } from "./figures.ts";
import { sandboxedView } from "./floors.ts";
import { BUDGETS } from "./budgets.ts";
import { ms } from "./timing.ts";

const RUNS = 9;

export default async function sandboxBench(): Promise<void> {
  const bench = await openBench();
  try {
    const f = await sandboxedView(bench, RUNS);
    const { budget, target } = BUDGETS.sandboxed_view;
    for (const part of f.parts) console.log(`sandbox: ${part.name} ${ms(part.median)}`);
    console.log(
      `sandbox: the sandboxed view ${ms(f.subject)} against its floor ${ms(f.baseline)} ` +
        `(medians of ${RUNS}); ratio ${f.ratio.toFixed(2)} (budget ${budget}, target ${target}); ` +
        `load ${Deno.loadavg()[0].toFixed(1)}`,
    );
    const cost = f.subject - f.parts[0].median;
    console.log(`sandbox: starting the sandboxed tool host adds ${ms(cost)} to a one-shot call`);
  } finally {
    await bench.close();
  }
}

if (import.meta.main) await sandboxBench();
