/**
 * Editor benchmark: on a generated 20 MB text file, times a `str_replace` and a `view` of the last
 * 20 lines through the tool, against one plain read + write of the same file measured in the same
 * run. Targets: str_replace <= 3x read+write, tail view <= 1x.
 *
 * Run alone with `deno run -A bench/edit_bench.ts [--runs N] [--mb SIZE]`.
 */
import { join } from "node:path";
import { EditTool } from "../src/tools/edit/tool.ts";
import { realWorkspace } from "../src/policy/workspace.ts";

const LINE =
  "    const total = items.reduce((sum, item) => sum + item.price * item.qty, 0); // x\n";

/** Runs the benchmark (median of `--runs` runs, default 5) and prints one summary line. */
export default async function editBench(args: string[]): Promise<void> {
  const runs = numberFlag(args, "--runs", 5);
  const megabytes = numberFlag(args, "--mb", 20);
  const dir = await realWorkspace(await Deno.makeTempDir({ prefix: "deft-edit-bench-" }));
  try {
    const path = join(dir, "big.ts");
    const half = Math.ceil((megabytes * 1_000_000) / LINE.length / 2);
    // One unique line in the middle for str_replace to find (it must scan past it to be sure).
    await Deno.writeTextFile(path, LINE.repeat(half) + "const marker = 0;\n" + LINE.repeat(half));
    const lineCount = 2 * half + 1;
    const size = (await Deno.stat(path)).size;
    const tool = new EditTool({
      provider: "anthropic",
      workspace: dir,
      // The default 10 MB limit would (rightly) refuse to edit this file whole.
      settings: { maxFileBytes: size * 2 },
    });
    const plain: number[] = [];
    const replace: number[] = [];
    const tail: number[] = [];
    for (let run = 0; run < runs; run++) {
      plain.push(
        await time(async () => {
          const bytes = await Deno.readFile(path);
          await Deno.writeFile(path, bytes);
        }),
      );
      const [from, to] = run % 2 === 0 ? ["= 0;", "= 1;"] : ["= 1;", "= 0;"];
      replace.push(
        await time(async () => {
          const result = await tool.execute({
            command: "str_replace",
            path,
            old_str: `const marker ${from}`,
            new_str: `const marker ${to}`,
          });
          if (result.error_code !== 0) throw new Error(`str_replace failed: ${result.error}`);
        }),
      );
      tail.push(
        await time(async () => {
          const result = await tool.execute({
            command: "view",
            path,
            view_range: [lineCount - 19, -1],
          });
          if (result.error_code !== 0) throw new Error(`view failed: ${result.error}`);
        }),
      );
    }
    const [p, r, t] = [median(plain), median(replace), median(tail)];
    console.log(
      `edit: ${Math.round(size / 1_000_000)} MB file: str_replace ${ms(r)}, tail view ${ms(t)}, ` +
        `read+write ${ms(p)}; ratios ${(r / p).toFixed(1)} (target <= 3), ` +
        `${(t / p).toFixed(1)} (target <= 1)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function time(fn: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function numberFlag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  const value = at === -1 ? NaN : Number(args[at + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

if (import.meta.main) await editBench(Deno.args);
