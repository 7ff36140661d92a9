/**
 * Runs every `bench/*_bench.ts` in name order, each printing its own figures and ratios against a
 * baseline measured in the same run. `deno task bench [--only a,b] [ARGS...]` runs a subset; the
 * remaining ARGS go to each benchmark (the ckg benchmark takes a directory). The container
 * benchmark (`--only container`) starts a private dockerd and needs root and docker.io.
 */
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { only: { type: "string" } },
  allowPositionals: true,
});
/** Selections that name several benchmarks (`--only scale`: issue 51's costs as the work grows). */
const GROUPS: Record<string, string[]> = { scale: ["ckg_kernel"] };
const only = values.only?.split(",").map((s) => s.trim()).flatMap((s) => GROUPS[s] ?? [s]);
const dir = new URL(".", import.meta.url);
const names = [...Deno.readDirSync(dir)]
  .map((e) => e.name)
  .filter((n) => n.endsWith("_bench.ts"))
  .filter((n) => !only || only.includes(n.replace(/_bench\.ts$/, "")))
  .sort();

for (const name of names) {
  const module = await import(new URL(name, dir).href);
  try {
    await module.default(positionals);
  } catch (e) {
    console.log(`${name}: FAILED: ${e instanceof Error ? e.message : e}`);
  }
}
