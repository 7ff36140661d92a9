/**
 * Start-up on the pipeline path: `deft tool task_done '{}'` and `deft tools --json`, from source
 * and from the bundle, against `deno run` of a hello-world measured in the same run, with the
 * same permission flags as the `deft` task.
 *
 * Deno pays for every byte of a main module before running it, even bytes in a comment, and the
 * bundle must carry the grammars and SDKs. So the run also times the bundle's floor: the same
 * hello-world padded with a comment to the bundle's size.
 */
import { bundle as buildBundle } from "../scripts/bundle.ts";
import { deftFlags } from "../scripts/deft_flags.ts";
import { median, ms, timeCommand } from "./timing.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const RUNS = 15;

export default async function startupBench(): Promise<void> {
  const deno = Deno.execPath();
  const flags = deftFlags();
  const tmp = await Deno.makeTempDir({ prefix: "deft-bench-" });
  try {
    const hello = `${tmp}/hello.ts`;
    await Deno.writeTextFile(hello, 'console.log("hello");\n');
    const bundle = `${tmp}/deft.js`;
    const padded = `${tmp}/hello-padded.js`;
    let size = 0;
    try {
      size = await buildBundle(bundle);
      const filler = "x".repeat(Math.max(0, size - 40));
      await Deno.writeTextFile(padded, `console.log("hello");\n/*${filler}*/\n`);
    } catch (e) {
      console.log(`startup: bundling failed (${e instanceof Error ? e.message : e})`);
    }
    const hasBundle = size > 0;
    const cases: Record<string, string[]> = {
      "hello-world": ["run", ...flags, hello],
      "deft tool task_done": ["run", ...flags, `${ROOT}main.ts`, "tool", "task_done", "{}"],
      "deft tools --json": ["run", ...flags, `${ROOT}main.ts`, "tools", "--json"],
    };
    if (hasBundle) {
      cases["hello-world padded to the bundle's size"] = ["run", ...flags, padded];
      cases["bundle tool task_done"] = ["run", ...flags, bundle, "tool", "task_done", "{}"];
      cases["bundle tools --json"] = ["run", ...flags, bundle, "tools", "--json"];
    }
    const times: Record<string, number[]> = {};
    for (const args of Object.values(cases)) await timeCommand(deno, args, tmp); // warm caches
    for (let i = 0; i < RUNS; i++) {
      for (const [name, args] of Object.entries(cases)) {
        (times[name] ??= []).push(await timeCommand(deno, args, tmp));
      }
    }
    const base = median(times["hello-world"]);
    console.log(`startup: hello-world ${ms(base)} (median of ${RUNS}, same flags)`);
    for (const name of Object.keys(cases).slice(1)) {
      const m = median(times[name]);
      const floor = name.startsWith("hello-world padded");
      console.log(
        `startup: ${name} ${ms(m)}; ratio ${(m / base).toFixed(2)}` +
          (floor ? " (the floor for any one-file Deft)" : " (target <= 1.6)"),
      );
    }
    if (hasBundle) {
      console.log(`startup: bundle size ${(size / 1024 / 1024).toFixed(2)} MiB`);
      const over = (name: string, floor: string) => median(times[name]) - median(times[floor]);
      const padded = "hello-world padded to the bundle's size";
      console.log(
        `startup: above its floor the bundle takes ${ms(over("bundle tool task_done", padded))} ` +
          `(tool task_done) and ${ms(over("bundle tools --json", padded))} (tools --json); the ` +
          `source path takes ${ms(over("deft tool task_done", "hello-world"))} and ` +
          `${ms(over("deft tools --json", "hello-world"))} above hello-world`,
      );
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) await startupBench();
