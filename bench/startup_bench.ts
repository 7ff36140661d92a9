/**
 * Start-up on the pipeline path: `deft tool task_done '{}'` and `deft tools --json`, from source
 * and from the bundle, against `deno run` of a hello-world measured in the same run, with the
 * same permission flags as the `deft` task.
 */
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
    await new Deno.Command(deno, {
      args: [
        "bundle",
        "--platform",
        "deno",
        "--minify",
        "--unstable-raw-imports",
        "--unstable-worker-options",
        "-o",
        bundle,
        "main.ts",
      ],
      cwd: ROOT,
      stdout: "null",
      stderr: "null",
    }).output();
    const hasBundle = await Deno.stat(bundle).then(() => true, () => false);
    const cases: Record<string, string[]> = {
      "hello-world": ["run", ...flags, hello],
      "deft tool task_done": ["run", ...flags, `${ROOT}main.ts`, "tool", "task_done", "{}"],
      "deft tools --json": ["run", ...flags, `${ROOT}main.ts`, "tools", "--json"],
    };
    if (hasBundle) {
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
      console.log(`startup: ${name} ${ms(m)}; ratio ${(m / base).toFixed(2)} (target <= 1.6)`);
    }
    if (hasBundle) {
      const size = (await Deno.stat(bundle)).size;
      console.log(`startup: bundle size ${(size / 1024 / 1024).toFixed(2)} MiB`);
    } else {
      console.log("startup: deno bundle failed; bundle figures skipped");
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) await startupBench();
