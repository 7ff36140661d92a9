/**
 * Legacy-encoding benchmark: a `view` (first 50 lines) and a `str_replace` through the editor on a
 * generated 5 MB GBK file, against the same two calls on the same text in UTF-8, measured in the
 * same run. The ratio is what detecting, decoding and re-encoding a legacy file costs.
 *
 * Run alone with `deno run -A bench/legacy_encoding_bench.ts [--runs N] [--mb SIZE]`.
 */
import { join } from "node:path";
import iconv from "iconv-lite";
import { realWorkspace } from "../src/policy/workspace.ts";
import { EditTool } from "../src/tools/edit/tool.ts";
import { median, ms } from "./timing.ts";

const LINE = "    total += item.price * item.qty; // 计算商品总价，包含税费与运费的合计金额\n";

/** Runs the benchmark (median of `--runs` runs, default 5) and prints one summary line. */
export default async function legacyEncodingBench(args: string[]): Promise<void> {
  const runs = numberFlag(args, "--runs", 5);
  const megabytes = numberFlag(args, "--mb", 5);
  const dir = await realWorkspace(await Deno.makeTempDir({ prefix: "deft-legacy-bench-" }));
  try {
    const lines = Math.ceil((megabytes * 1_000_000) / iconv.encode(LINE, "gbk").length / 2);
    const text = LINE.repeat(lines) + "const marker = 0; // 标记\n" + LINE.repeat(lines);
    const utf8Path = join(dir, "utf8.js");
    const gbkPath = join(dir, "gbk.js");
    await Deno.writeTextFile(utf8Path, text);
    await Deno.writeFile(gbkPath, new Uint8Array(iconv.encode(text, "gbk")));
    const tool = new EditTool({ provider: "anthropic", workspace: dir, settings: {} });
    const cost = {
      utf8: { view: [] as number[], edit: [] as number[] },
      gbk: { view: [] as number[], edit: [] as number[] },
    };
    for (let run = 0; run < runs; run++) {
      const [from, to] = run % 2 === 0 ? ["= 0;", "= 1;"] : ["= 1;", "= 0;"];
      for (const [key, path] of [["utf8", utf8Path], ["gbk", gbkPath]] as const) {
        cost[key].view.push(await time(tool, { command: "view", path, view_range: [1, 50] }));
        cost[key].edit.push(
          await time(tool, {
            command: "str_replace",
            path,
            old_str: `const marker ${from}`,
            new_str: `const marker ${to}`,
          }),
        );
      }
    }
    const [uv, ue, gv, ge] = [cost.utf8.view, cost.utf8.edit, cost.gbk.view, cost.gbk.edit]
      .map(median);
    const size = (await Deno.stat(gbkPath)).size;
    const utf8Size = (await Deno.stat(utf8Path)).size;
    console.log(
      `legacy encoding: ${(size / 1_000_000).toFixed(1)} MB GBK file: view ${ms(gv)}, ` +
        `str_replace ${ms(ge)}; same text in UTF-8 (${
          (utf8Size / 1_000_000).toFixed(1)
        } MB): view ${ms(uv)}, str_replace ${ms(ue)}; ` +
        `ratios GBK/UTF-8 view ${(gv / uv).toFixed(1)}, str_replace ${(ge / ue).toFixed(1)}, ` +
        `view + str_replace ${((gv + ge) / (uv + ue)).toFixed(1)}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function time(tool: EditTool, args: Record<string, unknown>): Promise<number> {
  const start = performance.now();
  const result = await tool.execute(args);
  const elapsed = performance.now() - start;
  if (result.error_code !== 0) throw new Error(`${args.command} failed: ${result.error}`);
  return elapsed;
}

function numberFlag(args: string[], name: string, fallback: number): number {
  const at = args.indexOf(name);
  const value = at === -1 ? NaN : Number(args[at + 1]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

if (import.meta.main) await legacyEncodingBench(Deno.args);
